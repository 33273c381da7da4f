#include "obs/otlp_encoder.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/utf8.h"

namespace surge::obs {
namespace {

// --- Protobuf wire format: varints, fixed-width little-endian, length-delimited ---

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendTag(uint32_t field, WireType type, std::string* out) { AppendVarint(field << 3 | type, out); }

void AppendLittleEndian(uint64_t value, int num_bytes, std::string* out) {
  for (int i = 0; i < num_bytes; ++i, value >>= 8) out->push_back(static_cast<char>(value & 0xff));
}

void AppendBytes(uint32_t field, std::string_view bytes, std::string* out) {
  AppendTag(field, kLengthDelimited, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

// A string field: invalid UTF-8 would make decoders refuse the whole request.
void AppendString(uint32_t field, std::string_view text, std::string* out) {
  if (IsValidUtf8(text)) return AppendBytes(field, text, out);
  AppendBytes(field, Utf8Lossy(text), out);
}

void AppendFixed64(uint32_t field, uint64_t value, std::string* out) {
  AppendTag(field, kFixed64, out);
  AppendLittleEndian(value, 8, out);
}

template <size_t N>
std::string_view BytesOf(const std::array<uint8_t, N>& id) {
  return {reinterpret_cast<const char*>(id.data()), N};
}

// AnyValue: 1 string_value, 2 bool_value, 3 int_value, 4 double_value, 5 array_value
// (ArrayValue: 1 values).
std::string EncodeAnyValue(const AttributeValue& value) {
  std::string out;
  if (const auto* texts = std::get_if<std::vector<std::string>>(&value)) {
    std::string array;
    for (const std::string& text : *texts) {
      std::string element;
      AppendString(1, text, &element);
      AppendBytes(1, element, &array);
    }
    AppendBytes(5, array, &out);
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    AppendString(1, *text, &out);
  } else if (const auto* flag = std::get_if<bool>(&value)) {
    AppendTag(2, kVarint, &out);
    AppendVarint(*flag ? 1 : 0, &out);
  } else if (const auto* integer = std::get_if<int64_t>(&value)) {
    AppendTag(3, kVarint, &out);
    AppendVarint(static_cast<uint64_t>(*integer), &out);  // negative: ten bytes, as int64 wants
  } else {
    uint64_t bits = 0;
    const double real = std::get<double>(value);
    std::memcpy(&bits, &real, sizeof bits);
    AppendFixed64(4, bits, &out);
  }
  return out;
}

// KeyValue: 1 key, 2 value.
void AppendKeyValue(uint32_t field, const Attribute& attribute, std::string* out) {
  std::string key_value;
  AppendString(1, attribute.key, &key_value);
  AppendBytes(2, EncodeAnyValue(attribute.value), &key_value);
  AppendBytes(field, key_value, out);
}

// Span.flags: the W3C trace flags in bits 0-7, then whether the parent is remote is known
// (bit 8) and whether it is (bit 9).
uint32_t SpanFlags(const SpanData& span) {
  return span.trace_flags | 0x100u | (span.parent_remote ? 0x200u : 0u);
}

// Span: 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind,
// 7 start_time_unix_nano, 8 end_time_unix_nano, 9 attributes, 15 status, 16 flags.
std::string EncodeSpan(const SpanData& span) {
  std::string out;
  AppendBytes(1, BytesOf(span.trace_id), &out);
  AppendBytes(2, BytesOf(span.span_id), &out);
  if (!span.trace_state.empty()) AppendString(3, span.trace_state, &out);
  if (!IsZero(span.parent_span_id)) AppendBytes(4, BytesOf(span.parent_span_id), &out);
  AppendString(5, span.name, &out);
  if (span.kind != SpanKind::kUnspecified) {
    AppendTag(6, kVarint, &out);
    AppendVarint(static_cast<uint64_t>(span.kind), &out);
  }
  AppendFixed64(7, static_cast<uint64_t>(span.start_unix_nanos), &out);
  AppendFixed64(8, static_cast<uint64_t>(span.end_unix_nanos), &out);
  for (const Attribute& attribute : span.attributes) AppendKeyValue(9, attribute, &out);
  if (span.status_code != SpanStatusCode::kUnset || !span.status_message.empty()) {
    std::string status;  // Status: 2 message, 3 code
    if (!span.status_message.empty()) AppendString(2, span.status_message, &status);
    if (span.status_code != SpanStatusCode::kUnset) {
      AppendTag(3, kVarint, &status);
      AppendVarint(static_cast<uint64_t>(span.status_code), &status);
    }
    AppendBytes(15, status, &out);
  }
  AppendTag(16, kFixed32, &out);
  AppendLittleEndian(SpanFlags(span), 4, &out);
  return out;
}

// --- OTLP/JSON ---

void AppendJsonString(std::string_view text, std::string* out) {
  const std::string valid = IsValidUtf8(text) ? std::string() : Utf8Lossy(text);
  if (!valid.empty()) text = valid;
  out->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
          *out += escaped;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// proto3 JSON: a double is a number, or "NaN" / "Infinity" / "-Infinity".
void AppendJsonDouble(double value, std::string* out) {
  if (std::isnan(value)) return AppendJsonString("NaN", out);
  if (std::isinf(value)) return AppendJsonString(value > 0 ? "Infinity" : "-Infinity", out);
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  *out += text;
}

void AppendJsonAnyValue(const AttributeValue& value, std::string* out) {
  if (const auto* texts = std::get_if<std::vector<std::string>>(&value)) {
    *out += "{\"arrayValue\":{\"values\":[";
    for (size_t i = 0; i < texts->size(); ++i) {
      *out += i > 0 ? ",{\"stringValue\":" : "{\"stringValue\":";
      AppendJsonString((*texts)[i], out);
      out->push_back('}');
    }
    *out += "]}";
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    *out += "{\"stringValue\":";
    AppendJsonString(*text, out);
  } else if (const auto* flag = std::get_if<bool>(&value)) {
    *out += *flag ? "{\"boolValue\":true" : "{\"boolValue\":false";
  } else if (const auto* integer = std::get_if<int64_t>(&value)) {
    *out += "{\"intValue\":\"" + std::to_string(*integer) + "\"";
  } else {
    *out += "{\"doubleValue\":";
    AppendJsonDouble(std::get<double>(value), out);
  }
  out->push_back('}');
}

void AppendJsonAttributes(const std::vector<Attribute>& attributes, std::string* out) {
  *out += "\"attributes\":[";
  for (size_t i = 0; i < attributes.size(); ++i) {
    if (i > 0) out->push_back(',');
    *out += "{\"key\":";
    AppendJsonString(attributes[i].key, out);
    *out += ",\"value\":";
    AppendJsonAnyValue(attributes[i].value, out);
    out->push_back('}');
  }
  out->push_back(']');
}

void AppendJsonSpan(const SpanData& span, std::string* out) {
  *out += "{\"traceId\":\"" + ToHex(span.trace_id) + "\",\"spanId\":\"" + ToHex(span.span_id) + "\"";
  if (!span.trace_state.empty()) {
    *out += ",\"traceState\":";
    AppendJsonString(span.trace_state, out);
  }
  if (!IsZero(span.parent_span_id)) *out += ",\"parentSpanId\":\"" + ToHex(span.parent_span_id) + "\"";
  *out += ",\"flags\":" + std::to_string(SpanFlags(span)) + ",\"name\":";
  AppendJsonString(span.name, out);
  *out += ",\"kind\":" + std::to_string(static_cast<int>(span.kind));
  *out += ",\"startTimeUnixNano\":\"" + std::to_string(span.start_unix_nanos) + "\"";
  *out += ",\"endTimeUnixNano\":\"" + std::to_string(span.end_unix_nanos) + "\",";
  AppendJsonAttributes(span.attributes, out);
  *out += ",\"status\":{";
  if (!span.status_message.empty()) {
    *out += "\"message\":";
    AppendJsonString(span.status_message, out);
    out->push_back(',');
  }
  *out += "\"code\":" + std::to_string(static_cast<int>(span.status_code)) + "}}";
}

}  // namespace

StatusOr<OtlpProtocol> ParseOtlpProtocol(std::string_view name) {
  if (name == "http/protobuf") return OtlpProtocol::kHttpProtobuf;
  if (name == "http/json") return OtlpProtocol::kHttpJson;
  return InvalidArgumentError("unknown OTLP protocol '" + std::string(name) + "' (http/protobuf | http/json)");
}

std::string_view OtlpContentType(OtlpProtocol protocol) {
  return protocol == OtlpProtocol::kHttpJson ? "application/json" : "application/x-protobuf";
}

// ExportTraceServiceRequest: 1 resource_spans. ResourceSpans: 1 resource, 2 scope_spans.
// Resource: 1 attributes. ScopeSpans: 1 scope, 2 spans. InstrumentationScope: 1 name, 2 version.
std::string EncodeOtlpProtobuf(const OtlpResource& resource, std::span<const SpanData> spans) {
  std::string resource_message;
  AppendKeyValue(1, {"service.name", resource.service_name}, &resource_message);
  std::string scope;
  AppendString(1, resource.scope_name, &scope);
  if (!resource.scope_version.empty()) AppendString(2, resource.scope_version, &scope);
  std::string scope_spans;
  AppendBytes(1, scope, &scope_spans);
  for (const SpanData& span : spans) AppendBytes(2, EncodeSpan(span), &scope_spans);
  std::string resource_spans;
  AppendBytes(1, resource_message, &resource_spans);
  AppendBytes(2, scope_spans, &resource_spans);
  std::string request;
  AppendBytes(1, resource_spans, &request);
  return request;
}

std::string EncodeOtlpJson(const OtlpResource& resource, std::span<const SpanData> spans) {
  std::string out = "{\"resourceSpans\":[{\"resource\":{";
  AppendJsonAttributes({{"service.name", resource.service_name}}, &out);
  out += "},\"scopeSpans\":[{\"scope\":{\"name\":";
  AppendJsonString(resource.scope_name, &out);
  if (!resource.scope_version.empty()) {
    out += ",\"version\":";
    AppendJsonString(resource.scope_version, &out);
  }
  out += "},\"spans\":[";
  for (size_t i = 0; i < spans.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonSpan(spans[i], &out);
  }
  out += "]}]}]}";
  return out;
}

std::string EncodeOtlp(OtlpProtocol protocol, const OtlpResource& resource, std::span<const SpanData> spans) {
  return protocol == OtlpProtocol::kHttpJson ? EncodeOtlpJson(resource, spans) : EncodeOtlpProtobuf(resource, spans);
}

}  // namespace surge::obs
