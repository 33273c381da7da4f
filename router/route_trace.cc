#include "router/route_trace.h"

#include <chrono>

namespace surge::router {
namespace {

obs::SpanData SpanOf(const obs::TraceContext& context, const obs::SpanId& parent, bool parent_remote,
                     std::string name, obs::SpanKind kind) {
  obs::SpanData span;
  span.trace_id = context.trace_id;
  span.span_id = context.span_id;
  span.parent_span_id = parent;
  span.parent_remote = parent_remote;
  span.trace_flags = context.trace_flags;
  span.trace_state = context.trace_state;
  span.name = std::move(name);
  span.kind = kind;
  span.start_unix_nanos = UnixNanosNow();
  return span;
}

}  // namespace

int64_t UnixNanosNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

RouteTrace::RouteTrace(const obs::Tracer* tracer, const net::HttpHeaders& request_headers, std::string_view method,
                       std::string_view path)
    : tracer_(tracer) {
  if (!on()) return;
  std::optional<obs::TraceContext> parent;
  if (const std::string* header = request_headers.Find("traceparent")) {
    parent = obs::ParseTraceparent(*header);
    if (parent) parent->trace_state = obs::SanitizeTracestate(request_headers.Get("tracestate"));
  }
  context_ = tracer_->StartSpan(parent);
  route_ = SpanOf(context_, parent ? parent->span_id : obs::SpanId{}, parent.has_value(),
                  std::string(method) + " " + std::string(path), obs::SpanKind::kServer);
  route_.Set("surge.span", "route");
  route_.Set("http.request.method", method);
  route_.Set("url.path", path);
}

std::string RouteTrace::StartAttempt(std::string_view backend_url) {
  if (!on()) return {};
  if (attempt_) EndAttempt(0, Status(StatusCode::kCancelled, "superseded"));
  const obs::TraceContext child = obs::Tracer::ChildOf(context_);
  attempt_ = SpanOf(child, context_.span_id, false, "backend_attempt", obs::SpanKind::kClient);
  attempt_->Set("surge.backend", backend_url);
  attempt_->Set("surge.attempt", int64_t{++num_attempts_});
  return obs::FormatTraceparent(child);
}

void RouteTrace::EndAttempt(int http_status, const Status& status) {
  if (!on() || !attempt_) return;
  attempt_->end_unix_nanos = UnixNanosNow();
  if (http_status != 0) attempt_->Set("http.response.status_code", int64_t{http_status});
  if (!status.ok() || http_status >= 500 || http_status == 429) {
    attempt_->status_code = obs::SpanStatusCode::kError;
    attempt_->status_message = status.ok() ? "HTTP " + std::to_string(http_status) : status.message();
  }
  tracer_->Record(std::move(*attempt_));
  attempt_.reset();
}

std::string RouteTrace::traceparent() const { return on() ? obs::FormatTraceparent(context_) : std::string(); }

void RouteTrace::End(int http_status) {
  if (!on()) return;
  if (attempt_) EndAttempt(0, Status(StatusCode::kCancelled, "the request ended first"));
  route_.end_unix_nanos = UnixNanosNow();
  route_.Set("http.response.status_code", int64_t{http_status});
  route_.Set("surge.attempts", int64_t{num_attempts_});
  if (http_status >= 500 || http_status == 0) route_.status_code = obs::SpanStatusCode::kError;
  tracer_->Record(std::move(route_));
}

}  // namespace surge::router
