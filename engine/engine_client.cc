#include "engine/engine_client.h"

namespace surge {

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kAbort: return "abort";
  }
  return "unknown";
}

const char* PoolingKindName(PoolingKind kind) { return kind == PoolingKind::kMean ? "mean" : "last"; }

StatusOr<PoolingKind> ParsePoolingKind(const std::string& name) {
  if (name == "last") return PoolingKind::kLast;
  if (name == "mean") return PoolingKind::kMean;
  return InvalidArgumentError("unknown pooling '" + name + "' (last, mean)");
}

const char* KvEventTypeName(KvEvent::Type type) {
  switch (type) {
    case KvEvent::Type::kStored: return "stored";
    case KvEvent::Type::kEvicted: return "evicted";
    case KvEvent::Type::kCleared: return "cleared";
  }
  return "unknown";
}

}  // namespace surge
