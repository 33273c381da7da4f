#include "obs/tracer.h"

#include <cmath>
#include <utility>

namespace surge::obs {

bool SampledByRatio(const TraceId& trace_id, double ratio) {
  if (!(ratio > 0)) return false;
  if (ratio >= 1) return true;
  uint64_t random_part = 0;
  for (size_t i = 9; i < trace_id.size(); ++i) random_part = random_part << 8 | trace_id[i];
  // In integers: a double holds 53 bits, fewer than the 56 compared.
  const auto threshold = static_cast<uint64_t>(std::ldexp(ratio, 56));  // in [0, 2^56)
  return random_part < threshold;
}

TraceContext Tracer::StartSpan(const std::optional<TraceContext>& parent) const {
  TraceContext context;
  if (parent && parent->valid()) {
    context = *parent;
  } else {
    context.trace_id = RandomTraceId();
    context.trace_flags = SampledByRatio(context.trace_id, sample_ratio_) ? kSampledFlag : 0;
  }
  context.span_id = RandomSpanId();
  context.remote = false;
  return context;
}

TraceContext Tracer::ChildOf(const TraceContext& parent) {
  TraceContext context = parent;
  context.span_id = RandomSpanId();
  context.remote = false;
  return context;
}

void Tracer::Record(SpanData span) const {
  if ((span.trace_flags & kSampledFlag) == 0 || exporter_ == nullptr) return;
  exporter_->Record(std::move(span));
}

}  // namespace surge::obs
