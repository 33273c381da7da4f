#include "model/safetensors.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace surge {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPath = "/m/model.safetensors";

// Length prefix + header text + `data_bytes` zero bytes.
std::vector<uint8_t> MakeFile(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> file(8 + header.size() + data_bytes, 0);
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) file[i] = static_cast<uint8_t>(length >> (8 * i));
  std::memcpy(file.data() + 8, header.data(), header.size());
  return file;
}

StatusOr<SafetensorsHeader> Parse(const std::string& header, size_t data_bytes) {
  return ParseSafetensorsHeader(MakeFile(header, data_bytes), kPath);
}

void ExpectDataLoss(const StatusOr<SafetensorsHeader>& result, const std::string& text) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kDataLoss) << result.status().ToString();
  EXPECT_THAT(result.status().message(), HasSubstr(kPath));
  EXPECT_THAT(result.status().message(), HasSubstr(text));
}

TEST(SafetensorsTest, ParsesEntriesInDataOrderWithMetadata) {
  StatusOr<SafetensorsHeader> header = Parse(
      R"({"b": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [16, 28]},
          "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
          "scalar": {"dtype": "F16", "shape": [], "data_offsets": [28, 30]},
          "empty": {"dtype": "F32", "shape": [0, 5], "data_offsets": [30, 30]},
          "__metadata__": {"format": "pt"}})",
      32);  // two bytes of trailing padding are allowed
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  ASSERT_EQ(header->tensors.size(), 4u);
  EXPECT_EQ(header->tensors[0].name, "a");
  EXPECT_EQ(header->tensors[0].dtype, TensorDType::kF32);
  EXPECT_EQ(header->tensors[1].name, "b");
  EXPECT_EQ(header->tensors[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(header->tensors[1].begin_bytes, 16u);
  EXPECT_EQ(header->tensors[1].end_bytes, 28u);
  EXPECT_EQ(header->tensors[2].name, "scalar");
  EXPECT_TRUE(header->tensors[2].shape.empty());
  EXPECT_EQ(header->tensors[3].name, "empty");
  EXPECT_EQ(header->metadata.at("format"), "pt");
  EXPECT_GT(header->data_offset_bytes, 8u);
}

TEST(SafetensorsTest, GapBetweenTensorsIsAllowed) {
  StatusOr<SafetensorsHeader> header = Parse(
      R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
          "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
      12);
  EXPECT_TRUE(header.ok()) << header.status().ToString();
}

TEST(SafetensorsTest, ShorterThanLengthPrefix) {
  std::vector<uint8_t> file = {1, 2, 3};
  ExpectDataLoss(ParseSafetensorsHeader(file, kPath), "shorter than the 8-byte header length");
}

TEST(SafetensorsTest, HeaderLengthPastEndOfFile) {
  std::vector<uint8_t> file = MakeFile("{}", 0);
  file[0] = 200;  // claims 200 header bytes, has 2
  ExpectDataLoss(ParseSafetensorsHeader(file, kPath), "runs past the end of the file");
}

TEST(SafetensorsTest, AbsurdHeaderLength) {
  std::vector<uint8_t> file = MakeFile("{}", 0);
  file[7] = 0x7f;  // ~9e18 bytes: refused before comparing with the file size
  ExpectDataLoss(ParseSafetensorsHeader(file, kPath), "exceeds the 100000000-byte limit");
}

TEST(SafetensorsTest, HeaderNotJsonOrNotObject) {
  ExpectDataLoss(Parse("{\"a\": ", 0), "header is not valid JSON");
  ExpectDataLoss(Parse("[1, 2, 3]", 0), "header is not a JSON object");
  ExpectDataLoss(Parse(R"({"a": 3})", 0), "tensor 'a': entry is not a JSON object");
  ExpectDataLoss(Parse(R"({"__metadata__": {"k": 1}})", 0), "'__metadata__' value for 'k'");
}

TEST(SafetensorsTest, MissingOrIllTypedFields) {
  ExpectDataLoss(Parse(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4),
                 "tensor 'w': missing 'dtype'");
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4),
                 "tensor 'w': missing 'shape'");
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": [1]}})", 4),
                 "tensor 'w': missing 'data_offsets'");
  ExpectDataLoss(Parse(R"({"w": {"dtype": 3, "shape": [1], "data_offsets": [0, 4]}})", 4),
                 "'dtype' must be a string");
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", 4),
                 "'shape' must be a list");
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4),
                 "'shape' must hold non-negative integers");
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", 4),
                 "'data_offsets' must be two non-negative integers");
}

TEST(SafetensorsTest, NegativeDimension) {
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": [-1, 4], "data_offsets": [0, 4]}})", 4),
                 "tensor 'w': 'shape' must hold non-negative integers, got [-1,4]");
}

TEST(SafetensorsTest, ShapeProductOverflow) {
  ExpectDataLoss(
      Parse(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})",
            4),
      "overflows 64 bits");
}

TEST(SafetensorsTest, OffsetsEndBeforeBegin) {
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8),
                 "tensor 'w': data_offsets [8,4] end before begin");
}

TEST(SafetensorsTest, OffsetsOutOfRange) {
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 8),
                 "tensor 'w': data_offsets [4,12] out of range of the data section (8 bytes)");
}

TEST(SafetensorsTest, ByteSizeMismatch) {
  ExpectDataLoss(Parse(R"({"w": {"dtype": "F16", "shape": [3], "data_offsets": [0, 8]}})", 8),
                 "tensor 'w': holds 8 bytes but F16[3] needs 6");
}

TEST(SafetensorsTest, OverlappingTensors) {
  ExpectDataLoss(Parse(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                       12),
                 "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
}

TEST(SafetensorsTest, UnsupportedDType) {
  StatusOr<SafetensorsHeader> header =
      Parse(R"({"x": {"dtype": "I16", "shape": [4], "data_offsets": [0, 8]}})", 8);
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(header.status().message(),
              HasSubstr(std::string("unsupported dtype 'I16' for tensor 'x' in ") + kPath));
}

TEST(TensorDTypeTest, HalfToFloatIsExact) {
  EXPECT_EQ(HalfToFloat(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);                      // largest finite
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));         // smallest normal
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));         // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x03ff), std::ldexp(1023.0f, -24));      // largest subnormal
  EXPECT_EQ(HalfToFloat(0x8200), -std::ldexp(512.0f, -24));      // negative subnormal
  EXPECT_EQ(HalfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfToFloat(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7c01)));  // signalling NaN stays NaN, not inf
}

TEST(TensorDTypeTest, HalfToFloatMatchesCompilerForAllValues) {
#if defined(__FLT16_MAX__)
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    _Float16 half;
    uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(&half, &b, 2);
    float expected = static_cast<float>(half);
    float actual = HalfToFloat(b);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(actual)) << bits;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(actual), std::bit_cast<uint32_t>(expected)) << bits;
    }
  }
#else
  GTEST_SKIP() << "compiler has no _Float16";
#endif
}

TEST(TensorDTypeTest, BFloat16ToFloatIsExact) {
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(BFloat16ToFloat(0x3eab), 0.333984375f);
  EXPECT_EQ(BFloat16ToFloat(0x0001), std::ldexp(1.0f, -133));  // subnormal
  EXPECT_EQ(BFloat16ToFloat(0x7f7f), 3.3895313892515355e38f);  // largest finite
  EXPECT_EQ(BFloat16ToFloat(0xff80), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(0x7fc0)));
}

}  // namespace
}  // namespace surge
