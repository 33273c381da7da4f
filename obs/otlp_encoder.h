// OTLP encodings of a batch of spans as one ExportTraceServiceRequest: protobuf (the
// binary wire format, hand-written) and OTLP/JSON, field numbers and names as in
// opentelemetry-proto's collector/trace/v1 and trace/v1.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "obs/span.h"

namespace surge::obs {

// Who produced the spans: the resource's service.name and the instrumentation scope.
struct OtlpResource {
  std::string service_name = "surge";
  std::string scope_name = "surge";
  std::string scope_version;  // "": not sent
};

enum class OtlpProtocol { kHttpProtobuf, kHttpJson };
// "http/protobuf" | "http/json" (the names of OTEL_EXPORTER_OTLP_PROTOCOL).
StatusOr<OtlpProtocol> ParseOtlpProtocol(std::string_view name);
// "application/x-protobuf" | "application/json".
std::string_view OtlpContentType(OtlpProtocol protocol);

// One ResourceSpans with one ScopeSpans holding `spans`, in their order.
std::string EncodeOtlpProtobuf(const OtlpResource& resource, std::span<const SpanData> spans);
// The same as OTLP/JSON: lowerCamelCase keys, ids as hex, int64 times and intValue as
// decimal strings, enums as numbers.
std::string EncodeOtlpJson(const OtlpResource& resource, std::span<const SpanData> spans);
std::string EncodeOtlp(OtlpProtocol protocol, const OtlpResource& resource, std::span<const SpanData> spans);

}  // namespace surge::obs
