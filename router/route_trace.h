// RouteTrace: the spans of one proxied request — `route` (SERVER: the whole request, the
// client's traceparent its parent) and one `backend_attempt` (CLIENT) per attempt, whose
// traceparent the engine continues, so one trace spans client → router → engine.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/http_types.h"
#include "obs/span.h"
#include "obs/trace_context.h"
#include "obs/tracer.h"

namespace surge::router {

int64_t UnixNanosNow();

class RouteTrace {
 public:
  // `tracer` null: tracing off, every call a no-op. The route span starts now.
  RouteTrace(const obs::Tracer* tracer, const net::HttpHeaders& request_headers, std::string_view method,
             std::string_view path);
  bool on() const { return tracer_ != nullptr; }

  // A new attempt's span starts now; the traceparent to send with it ("" when off).
  std::string StartAttempt(std::string_view backend_url);
  // `http_status` 0 when no response came; `status` the attempt's transport result.
  void EndAttempt(int http_status, const Status& status);
  // The route span's traceparent, for the response ("" when off).
  std::string traceparent() const;
  // Attributes of the route span (no-ops when off).
  template <typename T>
  void Set(std::string key, T value) {
    if (on()) route_.Set(std::move(key), value);
  }
  void End(int http_status);  // once; ends an attempt still open

 private:
  const obs::Tracer* const tracer_;
  obs::TraceContext context_;  // the route span's
  obs::SpanData route_;
  std::optional<obs::SpanData> attempt_;
  int num_attempts_ = 0;
};

}  // namespace surge::router
