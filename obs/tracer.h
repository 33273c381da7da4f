// Tracer: decides which traces are recorded (a head sampler: parent's decision, else a
// ratio of trace ids) and hands finished spans of sampled traces to the exporter.
#pragma once

#include <optional>

#include "obs/span.h"
#include "obs/span_exporter.h"
#include "obs/trace_context.h"

namespace surge::obs {

// True for a fraction `ratio` of trace ids, the same answer in every process given the
// same ratio: the id's last 7 bytes (the random part W3C level 2 asks for) read as an
// integer below ratio * 2^56. ratio <= 0: never; >= 1: always.
bool SampledByRatio(const TraceId& trace_id, double ratio);

class Tracer {
 public:
  // `exporter` is borrowed and must outlive the tracer.
  Tracer(double sample_ratio, SpanExporter* exporter) : sample_ratio_(sample_ratio), exporter_(exporter) {}

  // The context of a new local root span (a server span): it continues `parent` (a valid
  // incoming traceparent, whose sampled flag decides) or starts a trace sampled by ratio.
  // The tracestate travels on unchanged.
  TraceContext StartSpan(const std::optional<TraceContext>& parent) const;
  // A child of `parent` in the same process: a new span id, same trace, flags and state.
  static TraceContext ChildOf(const TraceContext& parent);

  // Exports `span` when its trace is sampled; never blocks (SpanExporter::Record).
  void Record(SpanData span) const;

  double sample_ratio() const { return sample_ratio_; }

 private:
  const double sample_ratio_;
  SpanExporter* const exporter_;
};

}  // namespace surge::obs
