// A finished span as the exporter sends it: ids, name, kind, unix-nanosecond times, typed
// attributes and status — the subset of the OpenTelemetry span model surge records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "obs/trace_context.h"

namespace surge::obs {

// Values as OTLP's opentelemetry.proto.trace.v1.Span.SpanKind numbers them.
enum class SpanKind { kUnspecified = 0, kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };
// Values as OTLP's Status.StatusCode numbers them.
enum class SpanStatusCode { kUnset = 0, kOk = 1, kError = 2 };

// The OTLP AnyValue kinds surge sets: string, int, double, bool, and string arrays
// (gen_ai.response.finish_reasons).
using AttributeValue = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;

struct Attribute {
  std::string key;
  AttributeValue value;
};

struct SpanData {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};     // all zero: a root span
  bool parent_remote = false;  // the parent came from another process (a traceparent)
  uint8_t trace_flags = 0;
  std::string trace_state;
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_unix_nanos = 0;
  int64_t end_unix_nanos = 0;
  std::vector<Attribute> attributes;
  SpanStatusCode status_code = SpanStatusCode::kUnset;
  std::string status_message;  // with kError only

  // Typed setters: a string literal stays a string, an int becomes int64.
  void Set(std::string key, std::string_view value) { attributes.push_back({std::move(key), std::string(value)}); }
  void Set(std::string key, const char* value) { Set(std::move(key), std::string_view(value)); }
  void Set(std::string key, int64_t value) { attributes.push_back({std::move(key), value}); }
  void Set(std::string key, int value) { Set(std::move(key), static_cast<int64_t>(value)); }
  void Set(std::string key, double value) { attributes.push_back({std::move(key), value}); }
  void Set(std::string key, bool value) { attributes.push_back({std::move(key), value}); }
  void Set(std::string key, std::vector<std::string> value) { attributes.push_back({std::move(key), std::move(value)}); }
};

}  // namespace surge::obs
