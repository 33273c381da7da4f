#include "engine/engine_client.h"

#include <algorithm>
#include <bit>

namespace surge {

void StepSizeHistogram::Observe(int64_t value) {
  // The first bound 2^i >= value: i = bit_width(value - 1) (0 and 1 go to the first bucket).
  const uint64_t above_one = static_cast<uint64_t>(std::max<int64_t>(value, 1) - 1);
  const int index = std::min(static_cast<int>(std::bit_width(above_one)), kNumBounds);
  ++bucket_counts[index];
  sum += value;
}

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
  }
  return "unknown";
}

const char* PoolingKindName(PoolingKind kind) {
  switch (kind) {
    case PoolingKind::kMean: return "mean";
    case PoolingKind::kCls: return "cls";
    case PoolingKind::kLast: break;
  }
  return "last";
}

StatusOr<PoolingKind> ParsePoolingKind(const std::string& name) {
  if (name == "last") return PoolingKind::kLast;
  if (name == "mean") return PoolingKind::kMean;
  if (name == "cls") return PoolingKind::kCls;
  return InvalidArgumentError("unknown pooling '" + name + "' (last, mean, cls)");
}

}  // namespace surge
