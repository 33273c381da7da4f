#include "server/request_trace.h"

#include <algorithm>
#include <strings.h>
#include <utility>

namespace surge {
namespace {

using SteadyClock = std::chrono::steady_clock;

thread_local std::shared_ptr<RequestTrace> current_trace;

// Every tracestate field, joined: a list split over several header lines is one list.
std::string JoinedTracestate(const net::HttpHeaders& headers) {
  std::string joined;
  for (const auto& [name, value] : headers) {
    if (strcasecmp(name.c_str(), "tracestate") != 0) continue;
    if (!joined.empty()) joined += ',';
    joined += value;
  }
  return joined;
}

std::chrono::nanoseconds UnixOffset() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch() -
                                                              SteadyClock::now().time_since_epoch());
}

}  // namespace

std::shared_ptr<RequestTrace> RequestTrace::Start(const obs::Tracer* tracer, const net::HttpRequest& http,
                                                  std::string_view endpoint, SteadyClock::time_point arrival,
                                                  std::shared_ptr<net::ResponseWriter> writer) {
  if (tracer == nullptr) return nullptr;
  std::optional<obs::TraceContext> parent;
  if (const std::string* header = http.headers.Find("traceparent")) parent = obs::ParseTraceparent(*header);
  // A tracestate without a valid traceparent is dropped, as the spec says.
  if (parent) parent->trace_state = obs::SanitizeTracestate(JoinedTracestate(http.headers));
  obs::TraceContext context = tracer->StartSpan(parent);
  writer->AddHeader("traceparent", obs::FormatTraceparent(context));
  std::string name = http.method + " " + std::string(endpoint);
  return std::shared_ptr<RequestTrace>(
      new RequestTrace(*tracer, std::move(context), std::move(parent), std::move(name), arrival, std::move(writer)));
}

RequestTrace::RequestTrace(const obs::Tracer& tracer, obs::TraceContext context,
                           std::optional<obs::TraceContext> parent, std::string name, SteadyClock::time_point arrival,
                           std::shared_ptr<net::ResponseWriter> writer)
    : tracer_(tracer),
      context_(std::move(context)),
      parent_(std::move(parent)),
      name_(std::move(name)),
      arrival_(arrival),
      writer_(std::move(writer)),
      unix_offset_(UnixOffset()) {}

RequestTrace::~RequestTrace() {
  if (!sampled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  tracer_.Record(ServerSpan(times_ ? times_->end : SteadyClock::now()));
  if (times_) RecordPhases(*times_);
}

void RequestTrace::Set(std::string key, obs::AttributeValue value) {
  std::lock_guard<std::mutex> lock(mu_);
  attributes_.push_back({std::move(key), std::move(value)});
}

void RequestTrace::SetGenerationTimes(const GenerationTimes& times) {
  std::lock_guard<std::mutex> lock(mu_);
  times_ = times;
}

void RequestTrace::SetError(std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  error_ = std::move(message);
}

obs::SpanData RequestTrace::ServerSpan(SteadyClock::time_point end) const {
  obs::SpanData span;
  span.trace_id = context_.trace_id;
  span.span_id = context_.span_id;
  if (parent_) span.parent_span_id = parent_->span_id;
  span.parent_remote = parent_.has_value();
  span.trace_flags = context_.trace_flags;
  span.trace_state = context_.trace_state;
  span.name = name_;
  span.kind = obs::SpanKind::kServer;
  span.start_unix_nanos = (arrival_.time_since_epoch() + unix_offset_).count();
  span.end_unix_nanos = (end.time_since_epoch() + unix_offset_).count();
  span.Set("http.request.method", name_.substr(0, name_.find(' ')));
  span.Set("http.route", name_.substr(name_.find(' ') + 1));
  const int status = writer_->status();
  if (status > 0) span.Set("http.response.status_code", status);
  span.attributes.insert(span.attributes.end(), attributes_.begin(), attributes_.end());
  // As OpenTelemetry's HTTP conventions have it: a server span fails on 5xx, not on 4xx
  // (the client's mistake), and on an error met after the head went out.
  if (error_ || status >= 500) {
    span.status_code = obs::SpanStatusCode::kError;
    span.status_message = error_.value_or("HTTP " + std::to_string(status));
  }
  return span;
}

// queue_wait: submitted until first scheduled; prefill: until the first token; decode:
// until the end. A request never scheduled has only queue_wait; one without output
// tokens no decode.
void RequestTrace::RecordPhases(const GenerationTimes& times) const {
  const SteadyClock::time_point last = times.first_token.value_or(times.end);
  if (!times.queue_time_s) return RecordChild("queue_wait", times.submitted, times.end);
  const auto queue = std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(*times.queue_time_s));
  // The engine's clock started at Submit, a moment after `submitted`: keep the order.
  const SteadyClock::time_point scheduled = std::min(times.submitted + queue, last);
  RecordChild("queue_wait", times.submitted, scheduled);
  RecordChild("prefill", scheduled, last);
  if (times.first_token) RecordChild("decode", *times.first_token, std::max(times.end, *times.first_token));
}

void RequestTrace::RecordChild(std::string name, SteadyClock::time_point start, SteadyClock::time_point end) const {
  const obs::TraceContext child = obs::Tracer::ChildOf(context_);
  obs::SpanData span;
  span.trace_id = child.trace_id;
  span.span_id = child.span_id;
  span.parent_span_id = context_.span_id;
  span.trace_flags = child.trace_flags;
  span.trace_state = child.trace_state;
  span.name = std::move(name);
  span.kind = obs::SpanKind::kInternal;
  span.start_unix_nanos = (start.time_since_epoch() + unix_offset_).count();
  span.end_unix_nanos = (end.time_since_epoch() + unix_offset_).count();
  tracer_.Record(std::move(span));
}

std::shared_ptr<RequestTrace> CurrentRequestTrace() { return current_trace; }

ScopedRequestTrace::ScopedRequestTrace(std::shared_ptr<RequestTrace> trace) : previous_(std::move(current_trace)) {
  current_trace = std::move(trace);
}

ScopedRequestTrace::~ScopedRequestTrace() { current_trace = std::move(previous_); }

}  // namespace surge
