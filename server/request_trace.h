// RequestTrace: the spans of one traced API request — the SERVER span from arrival to the
// answer, and its children queue_wait, prefill and decode built from times the HTTP side
// already has (the engine's queue time, the first token's drain, the end) once the
// request is over. Nothing here runs on the engine thread.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_types.h"
#include "net/response_writer.h"
#include "obs/span.h"
#include "obs/tracer.h"

namespace surge {

// When a generation's phases happened, on the steady clock.
struct GenerationTimes {
  std::chrono::steady_clock::time_point submitted;  // handed to the engine
  std::optional<double> queue_time_s;               // the engine's: Submit until first scheduled
  std::optional<std::chrono::steady_clock::time_point> first_token;  // first output drained
  std::chrono::steady_clock::time_point end;                         // the last output drained
};

class RequestTrace {
 public:
  // The trace of a request arriving at `arrival` on `endpoint` ("/v1/chat/completions"):
  // it continues the client's traceparent/tracestate when valid, and the response gets
  // the server span's traceparent. Null when `tracer` is.
  static std::shared_ptr<RequestTrace> Start(const obs::Tracer* tracer, const net::HttpRequest& http,
                                             std::string_view endpoint, std::chrono::steady_clock::time_point arrival,
                                             std::shared_ptr<net::ResponseWriter> writer);
  // Records the spans (when sampled): the request is over once nobody holds its trace.
  ~RequestTrace();

  const obs::TraceContext& context() const { return context_; }
  bool sampled() const { return context_.sampled(); }

  // Attributes of the server span; thread-safe.
  void Set(std::string key, obs::AttributeValue value);
  // The generation's phases: queue_wait, prefill and decode become children. The server
  // span ends at times.end.
  void SetGenerationTimes(const GenerationTimes& times);
  // The request failed: the server span's status is ERROR with `message`.
  void SetError(std::string message);

 private:
  RequestTrace(const obs::Tracer& tracer, obs::TraceContext context, std::optional<obs::TraceContext> parent,
               std::string name, std::chrono::steady_clock::time_point arrival,
               std::shared_ptr<net::ResponseWriter> writer);
  obs::SpanData ServerSpan(std::chrono::steady_clock::time_point end) const;
  void RecordPhases(const GenerationTimes& times) const;
  void RecordChild(std::string name, std::chrono::steady_clock::time_point start,
                   std::chrono::steady_clock::time_point end) const;

  const obs::Tracer& tracer_;
  const obs::TraceContext context_;
  const std::optional<obs::TraceContext> parent_;  // the client's span, when it sent one
  const std::string name_;                          // "POST /v1/chat/completions"
  const std::chrono::steady_clock::time_point arrival_;
  const std::shared_ptr<net::ResponseWriter> writer_;  // for the status it answered
  // Steady to unix time, fixed at arrival so that all spans of the trace agree.
  const std::chrono::nanoseconds unix_offset_;
  mutable std::mutex mu_;
  std::vector<obs::Attribute> attributes_;   // guarded by mu_
  std::optional<GenerationTimes> times_;     // guarded by mu_
  std::optional<std::string> error_;         // guarded by mu_
};

// The trace of the request the calling thread is handling, set by the server around each
// handler (as OpenTelemetry's own context is thread-local): lets the code that starts
// the engine work pick it up without passing it through every route. Null when none.
std::shared_ptr<RequestTrace> CurrentRequestTrace();
class ScopedRequestTrace {
 public:
  explicit ScopedRequestTrace(std::shared_ptr<RequestTrace> trace);
  ~ScopedRequestTrace();
  ScopedRequestTrace(const ScopedRequestTrace&) = delete;
  ScopedRequestTrace& operator=(const ScopedRequestTrace&) = delete;

 private:
  std::shared_ptr<RequestTrace> previous_;
};

}  // namespace surge
