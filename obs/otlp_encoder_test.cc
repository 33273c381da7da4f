#include "obs/otlp_encoder.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace surge::obs {
namespace {

// Trace id 01..10, span id 11..18, no parent, "s", SERVER, times 1 and 2, k=1 (int),
// sampled.
SpanData KnownSpan() {
  SpanData span;
  for (int i = 0; i < 16; ++i) span.trace_id[i] = static_cast<uint8_t>(i + 1);
  for (int i = 0; i < 8; ++i) span.span_id[i] = static_cast<uint8_t>(0x11 + i);
  span.name = "s";
  span.kind = SpanKind::kServer;
  span.start_unix_nanos = 1;
  span.end_unix_nanos = 2;
  span.Set("k", 1);
  span.trace_flags = kSampledFlag;
  return span;
}

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int value : values) out.push_back(static_cast<char>(value));
  return out;
}

TEST(OtlpProtobufTest, KnownSpanEncodesToHandComputedBytes) {
  // Worked out by hand from opentelemetry-proto: tag = field << 3 | wire type.
  const std::string span =
      Bytes({0x0a, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) +  // 1 trace_id
      Bytes({0x12, 0x08, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}) +         // 2 span_id
      Bytes({0x2a, 0x01, 's'}) +                                                     // 5 name
      Bytes({0x30, 0x02}) +                                                          // 6 kind SERVER
      Bytes({0x39, 1, 0, 0, 0, 0, 0, 0, 0}) +                                        // 7 start, fixed64
      Bytes({0x41, 2, 0, 0, 0, 0, 0, 0, 0}) +                                        // 8 end, fixed64
      // 9 attributes: KeyValue{1 key "k", 2 value AnyValue{3 int_value 1}}
      Bytes({0x4a, 0x07, 0x0a, 0x01, 'k', 0x12, 0x02, 0x18, 0x01}) +
      // 16 flags, fixed32: sampled | HAS_IS_REMOTE (0x100), little-endian
      Bytes({0x85, 0x01, 0x01, 0x01, 0x00, 0x00});
  ASSERT_EQ(span.size(), 66u);
  // Resource{1 attributes: KeyValue{"service.name", AnyValue{1 string_value "test"}}}
  const std::string resource = Bytes({0x0a, 0x16, 0x0a, 0x0c}) + "service.name" + Bytes({0x12, 0x06, 0x0a, 0x04}) + "test";
  const std::string scope_spans = Bytes({0x0a, 0x03, 0x0a, 0x01, 't'}) +  // 1 scope{1 name "t"}
                                  Bytes({0x12, 0x42}) + span;             // 2 spans
  const std::string resource_spans = Bytes({0x0a, 0x18}) + resource + Bytes({0x12, 0x49}) + scope_spans;
  const std::string request = Bytes({0x0a, 0x65}) + resource_spans;
  ASSERT_EQ(request.size(), 103u);

  const OtlpResource who{"test", "t", ""};
  const SpanData spans[] = {KnownSpan()};
  EXPECT_EQ(EncodeOtlpProtobuf(who, spans), request);
}

TEST(OtlpProtobufTest, ParentStateStatusAndValueTypes) {
  SpanData span = KnownSpan();
  span.attributes.clear();
  span.parent_span_id[7] = 0x2a;
  span.parent_remote = true;
  span.trace_state = "a=1";
  span.Set("neg", int64_t{-1});
  span.Set("d", 0.5);
  span.Set("b", true);
  span.Set("a", std::vector<std::string>{"x", "y"});
  span.status_code = SpanStatusCode::kError;
  span.status_message = "no";
  const SpanData spans[] = {span};
  const std::string bytes = EncodeOtlpProtobuf({}, spans);
  auto has = [&](const std::string& part) { return bytes.find(part) != std::string::npos; };
  EXPECT_TRUE(has(Bytes({0x1a, 0x03}) + "a=1"));                  // 3 trace_state
  EXPECT_TRUE(has(Bytes({0x22, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x2a})));  // 4 parent_span_id
  // int_value -1: ten-byte varint.
  EXPECT_TRUE(has(Bytes({0x12, 0x0b, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})));
  EXPECT_TRUE(has(Bytes({0x12, 0x09, 0x21, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f})));  // double_value 0.5
  EXPECT_TRUE(has(Bytes({0x12, 0x02, 0x10, 0x01})));                           // bool_value true
  // array_value{values: [{string_value "x"}, {string_value "y"}]}
  EXPECT_TRUE(has(Bytes({0x12, 0x0c, 0x2a, 0x0a, 0x0a, 0x03, 0x0a, 0x01, 'x', 0x0a, 0x03, 0x0a, 0x01, 'y'})));
  EXPECT_TRUE(has(Bytes({0x7a, 0x06, 0x12, 0x02}) + "no" + Bytes({0x18, 0x02})));  // 15 status
  EXPECT_TRUE(has(Bytes({0x85, 0x01, 0x01, 0x03, 0x00, 0x00})));              // flags: IS_REMOTE too
}

TEST(OtlpJsonTest, ShapeFollowsTheOtlpJsonMapping) {
  SpanData span = KnownSpan();
  span.start_unix_nanos = 1700000000123456789;
  span.parent_span_id[0] = 0xff;
  span.Set("text", "say \"hi\"\n");
  span.Set("ratio", 0.25);
  span.Set("ok", false);
  span.Set("reasons", std::vector<std::string>{"stop", "length"});
  const SpanData spans[] = {span};
  const nlohmann::json json = nlohmann::json::parse(EncodeOtlpJson({"svc", "scope", "1.0"}, spans));
  const nlohmann::json& resource_spans = json.at("resourceSpans").at(0);
  EXPECT_EQ(resource_spans.at("resource").at("attributes").at(0),
            nlohmann::json::parse(R"({"key":"service.name","value":{"stringValue":"svc"}})"));
  const nlohmann::json& scope_spans = resource_spans.at("scopeSpans").at(0);
  EXPECT_EQ(scope_spans.at("scope"), nlohmann::json::parse(R"({"name":"scope","version":"1.0"})"));
  const nlohmann::json& out = scope_spans.at("spans").at(0);
  EXPECT_EQ(out.at("traceId"), "0102030405060708090a0b0c0d0e0f10");  // hex, not base64
  EXPECT_EQ(out.at("spanId"), "1112131415161718");
  EXPECT_EQ(out.at("parentSpanId"), "ff00000000000000");
  EXPECT_EQ(out.at("kind"), 2);                                     // enums as numbers
  EXPECT_EQ(out.at("startTimeUnixNano"), "1700000000123456789");    // int64 as a string
  EXPECT_EQ(out.at("endTimeUnixNano"), "2");
  EXPECT_EQ(out.at("flags"), 0x101);
  const nlohmann::json& attributes = out.at("attributes");
  ASSERT_EQ(attributes.size(), 5u);
  EXPECT_EQ(attributes[4].at("value"),
            nlohmann::json::parse(R"({"arrayValue":{"values":[{"stringValue":"stop"},{"stringValue":"length"}]}})"));
  EXPECT_EQ(attributes[0].at("value"), nlohmann::json::parse(R"({"intValue":"1"})"));
  EXPECT_EQ(attributes[1].at("value").at("stringValue"), "say \"hi\"\n");
  EXPECT_EQ(attributes[2].at("value").at("doubleValue"), 0.25);
  EXPECT_EQ(attributes[3].at("value").at("boolValue"), false);
  EXPECT_EQ(out.at("status").at("code"), 0);
}

TEST(OtlpEncoderTest, InvalidUtf8BecomesReplacementCharacters) {
  SpanData span = KnownSpan();
  span.name = "bad\xff";
  const SpanData spans[] = {span};
  EXPECT_NO_THROW(nlohmann::json::parse(EncodeOtlpJson({}, spans)));
  EXPECT_NE(EncodeOtlpProtobuf({}, spans).find("bad\xef\xbf\xbd"), std::string::npos);
}

TEST(OtlpProtocolTest, ParsesTheTwoNames) {
  EXPECT_EQ(*ParseOtlpProtocol("http/protobuf"), OtlpProtocol::kHttpProtobuf);
  EXPECT_EQ(*ParseOtlpProtocol("http/json"), OtlpProtocol::kHttpJson);
  EXPECT_FALSE(ParseOtlpProtocol("grpc").ok());
  EXPECT_EQ(OtlpContentType(OtlpProtocol::kHttpProtobuf), "application/x-protobuf");
}

}  // namespace
}  // namespace surge::obs
