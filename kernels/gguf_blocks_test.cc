#include "kernels/gguf_blocks.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/packed_weight.h"

namespace surge {
namespace {

void PutF16(uint8_t* p, float x) {
  uint16_t bits = FloatToF16(x);
  std::memcpy(p, &bits, 2);
}

std::vector<float> Random(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

TEST(GgufBlocksTest, Q8_0KnownValues) {
  uint8_t block[34] = {};
  PutF16(block, 0.5f);
  for (int j = 0; j < 32; ++j) block[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  float y[32];
  DequantizeBlocks(BlockType::kQ8_0, block, 32, y);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.5f * (j - 16));
}

TEST(GgufBlocksTest, Q4_0KnownValues) {
  uint8_t block[18] = {};
  PutF16(block, 2.0f);
  block[2] = 0x3f;   // value 0: q = 15 -> 14; value 16: q = 3 -> -10
  block[17] = 0x80;  // value 15: q = 0 -> -16; value 31: q = 8 -> 0
  float y[32];
  DequantizeBlocks(BlockType::kQ4_0, block, 32, y);
  EXPECT_EQ(y[0], 14.0f);
  EXPECT_EQ(y[16], -10.0f);
  EXPECT_EQ(y[15], -16.0f);
  EXPECT_EQ(y[31], 0.0f);
  EXPECT_EQ(y[1], -16.0f);  // q = 0
}

TEST(GgufBlocksTest, Q4_1Q5_0Q5_1KnownValues) {
  uint8_t q41[20] = {};
  PutF16(q41, 0.5f);
  PutF16(q41 + 2, -1.0f);
  q41[4 + 3] = 0xa2;  // value 3: q 2; value 19: q 10
  float y[32];
  DequantizeBlocks(BlockType::kQ4_1, q41, 32, y);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[19], 4.0f);
  EXPECT_EQ(y[0], -1.0f);
  uint8_t q50[22] = {};
  PutF16(q50, 0.25f);
  const uint32_t qh = (1u << 2) | (1u << 20);  // 5th bit of values 2 and 20
  std::memcpy(q50 + 2, &qh, 4);
  q50[6 + 2] = 0x03;  // value 2: low 3 -> q 19; value 18: low 0 -> q 0
  q50[6 + 4] = 0x70;  // value 4: q 0; value 20: low 7 | 16 -> q 23
  DequantizeBlocks(BlockType::kQ5_0, q50, 32, y);
  EXPECT_EQ(y[2], 0.25f * (19 - 16));
  EXPECT_EQ(y[18], 0.25f * (0 - 16));
  EXPECT_EQ(y[20], 0.25f * (23 - 16));
  uint8_t q51[24] = {};
  PutF16(q51, 0.5f);
  PutF16(q51 + 2, 2.0f);
  std::memcpy(q51 + 4, &qh, 4);
  q51[8 + 2] = 0x03;
  DequantizeBlocks(BlockType::kQ5_1, q51, 32, y);
  EXPECT_EQ(y[2], 0.5f * 19 + 2.0f);
  EXPECT_EQ(y[20], 0.5f * 16 + 2.0f);
}

TEST(GgufBlocksTest, Q4_KKnownValues) {
  uint8_t block[144] = {};
  PutF16(block, 0.25f);     // d
  PutF16(block + 2, 1.0f);  // dmin
  uint8_t* scales = block + 4;
  scales[0] = 4;             // sub-block 0: sc 4
  scales[4] = 3;             // sub-block 0: m 3
  scales[1] = (1 << 6) | 8;  // sub-block 1: sc 8; top bits of sub-block 5's sc = 1
  scales[5] = (2 << 6) | 0;  // sub-block 1: m 0; top bits of sub-block 5's m = 2
  scales[9] = 0x21;          // sub-block 5: sc low 1 -> 17, m low 2 -> 34
  uint8_t* qs = block + 16;
  qs[0] = 0x57;      // value 0 (sub-block 0): 7; value 32 (sub-block 1): 5
  qs[32 + 3] = 0x90; // value 64+3 (sub-block 2): 0; value 96+3 (sub-block 3): 9
  qs[64 + 1] = 0xa0; // value 128+32+1 (sub-block 5): 10
  float y[256];
  DequantizeBlocks(BlockType::kQ4_K, block, 256, y);
  EXPECT_EQ(y[0], 0.25f * 4 * 7 - 3.0f);
  EXPECT_EQ(y[1], -3.0f);
  EXPECT_EQ(y[32], 0.25f * 8 * 5);
  EXPECT_EQ(y[99], 0.0f);  // sub-block 3: sc 0, m 0
  EXPECT_EQ(y[161], 0.25f * 17 * 10 - 34.0f);
  EXPECT_EQ(y[160], -34.0f);
}

TEST(GgufBlocksTest, Q5_KKnownValues) {
  uint8_t block[176] = {};
  PutF16(block, 0.25f);     // d
  PutF16(block + 2, 1.0f);  // dmin
  block[4 + 0] = 4;         // sub-block 0: sc 4, m 3
  block[4 + 4] = 3;
  block[4 + 3] = 2;         // sub-block 3: sc 2, m 0
  uint8_t* qh = block + 16;
  uint8_t* qs = block + 48;
  qs[5] = 0x07;             // value 5 (sub-block 0): low 7
  qh[5] = 0x01 | 0x08;      // its 5th bit (bit 0) -> q 23; value 96+5 (sub-block 3): 5th bit
  qs[32 + 5] = 0x90;        // value 96+5: high nibble 9 -> q 25
  float y[256];
  DequantizeBlocks(BlockType::kQ5_K, block, 256, y);
  EXPECT_EQ(y[5], 0.25f * 4 * 23 - 3.0f);
  EXPECT_EQ(y[101], 0.25f * 2 * 25);
  EXPECT_EQ(y[6], -3.0f);
}

TEST(GgufBlocksTest, Q6_KKnownValues) {
  uint8_t block[210] = {};
  uint8_t* ql = block;
  uint8_t* qh = block + 128;
  int8_t* scales = reinterpret_cast<int8_t*>(block + 192);
  PutF16(block + 208, 0.5f);
  for (int s = 0; s < 16; ++s) scales[s] = static_cast<int8_t>(s - 8);
  ql[5] = 0x21;          // value 5: low 1; value 69: low 2
  qh[5] = 0b11'00'10'01; // value 5: top 1 -> q 17; value 37: top 2; value 69: top 0 -> q 2; value 101: top 3
  ql[64 + 32 + 2] = 0xf0;  // half 1: value 128+32+2: low 0; value 128+96+2: low 15
  qh[32 + 2] = 0b01'00'11'00;  // value 162: top 3 -> q 48; value 226: top 1 -> q 31
  float y[256];
  DequantizeBlocks(BlockType::kQ6_K, block, 256, y);
  EXPECT_EQ(y[5], 0.5f * (0 - 8) * (17 - 32));
  EXPECT_EQ(y[37], 0.5f * (2 - 8) * (32 - 32));
  EXPECT_EQ(y[69], 0.5f * (4 - 8) * (2 - 32));
  EXPECT_EQ(y[101], 0.5f * (6 - 8) * (48 - 32));
  EXPECT_EQ(y[162], 0.5f * (10 - 8) * (48 - 32));
  EXPECT_EQ(y[226], 0.5f * (14 - 8) * (31 - 32));
  EXPECT_EQ(y[0], 0.5f * (0 - 8) * (0 - 32));
}

// Round trips: the error stays within what the format's step allows.
struct Bound {
  BlockType type;
  double max_rel;  // max |x - y| / max|x| over each block
  double rms_rel;  // rms(x - y) / rms(x) over the whole row
};

TEST(GgufBlocksTest, RoundTripsStayWithinTheirStep) {
  const Bound bounds[] = {
      {BlockType::kF32, 0, 0},          {BlockType::kF16, 1e-3, 5e-4},
      {BlockType::kBF16, 4e-3, 3e-3},   {BlockType::kQ8_0, 1.0 / 254 + 1e-3, 0.01},
      {BlockType::kQ4_0, 1.0 / 8 + 1e-3, 0.12}, {BlockType::kQ4_K, 0.08, 0.1},
      {BlockType::kQ4_1, 1.0 / 15 + 2e-3, 0.08}, {BlockType::kQ5_0, 1.0 / 16 + 1e-3, 0.065},
      {BlockType::kQ5_1, 1.0 / 31 + 2e-3, 0.05}, {BlockType::kQ5_K, 0.04, 0.05},
      {BlockType::kQ6_K, 0.025, 0.03},
  };
  const int64_t n = 4096;
  std::vector<float> x = Random(n, 7, 0.02f);
  x[100] = 0.5f;  // an outlier
  for (const Bound& b : bounds) {
    std::vector<uint8_t> blocks(BlockRowBytes(b.type, n));
    QuantizeBlocks(b.type, x.data(), n, blocks.data());
    std::vector<float> y(n);
    DequantizeBlocks(b.type, blocks.data(), n, y.data());
    double err2 = 0, norm2 = 0;
    const int64_t be = std::max<int64_t>(BlockElements(b.type), 32);
    for (int64_t start = 0; start < n; start += be) {
      double amax = 0, emax = 0;
      for (int64_t i = start; i < start + be; ++i) {
        amax = std::max(amax, std::fabs(double(x[i])));
        emax = std::max(emax, std::fabs(double(x[i]) - y[i]));
        err2 += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
        norm2 += double(x[i]) * x[i];
      }
      EXPECT_LE(emax, b.max_rel * amax) << BlockTypeName(b.type) << " block at " << start;
    }
    EXPECT_LE(std::sqrt(err2 / norm2), b.rms_rel) << BlockTypeName(b.type);
    // ggml's Q8_0/Q4_0/Q5_0 quantizers reproduce a decoded row exactly (its extreme
    // value fixes the same scale); min-max scales (Q4_1, Q5_1, Q4_K, Q6_K) need not.
    if (b.type != BlockType::kQ8_0 && b.type != BlockType::kQ4_0 && b.type != BlockType::kQ5_0) continue;
    std::vector<uint8_t> again(blocks.size());
    QuantizeBlocks(b.type, y.data(), n, again.data());
    std::vector<float> z(n);
    DequantizeBlocks(b.type, again.data(), n, z.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z[i], y[i]) << BlockTypeName(b.type);
  }
}

TEST(GgufBlocksTest, Q8_0AndQ4_0MatchGgmlReferenceQuantizer) {
  // ggml: Q8_0 d = amax / 127, q = roundf(x / d); Q4_0 d = max / -8 (max the signed value
  // of largest magnitude), q = min(15, (int8)(x / d + 8.5)).
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = (j - 10) * 0.125f;  // max magnitude 21 * 0.125 at j = 31
  uint8_t q8[34], q4[18];
  QuantizeBlocks(BlockType::kQ8_0, x, 32, q8);
  QuantizeBlocks(BlockType::kQ4_0, x, 32, q4);
  uint16_t d8, d4;
  std::memcpy(&d8, q8, 2);
  std::memcpy(&d4, q4, 2);
  EXPECT_EQ(d8, FloatToF16(2.625f / 127));
  EXPECT_EQ(d4, FloatToF16(2.625f / -8));
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 31]), 127);
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 0]), static_cast<int8_t>(std::roundf(-1.25f * 127 / 2.625f)));
  EXPECT_EQ(q4[2 + 15] >> 4, 0);  // x[31] = max -> q = 0 (w = -8 d)
  EXPECT_EQ(q4[2 + 0] & 0x0f, std::min(15, int(-1.25f / (2.625f / -8) + 8.5f)));
}

TEST(GgufBlocksTest, Int4GroupsReproduceDequantization) {
  for (BlockType type : {BlockType::kQ4_0, BlockType::kQ4_1, BlockType::kQ4_K}) {
    const int64_t n = 1024;
    std::vector<float> x = Random(n, 3, 0.05f);
    std::vector<uint8_t> blocks(BlockRowBytes(type, n));
    QuantizeBlocks(type, x.data(), n, blocks.data());
    std::vector<float> y(n);
    DequantizeBlocks(type, blocks.data(), n, y.data());
    std::vector<uint8_t> q(n);
    std::vector<Int4Group> groups(n / 32);
    BlocksToInt4Groups(type, blocks.data(), n, q.data(), groups.data());
    for (int64_t i = 0; i < n; ++i) {
      const float w = DequantizeInt4(groups[i / 32], q[i]);
      if (type != BlockType::kQ4_K) {
        ASSERT_EQ(w, y[i]) << i;  // exact
      } else {
        // f16 rounding of d*sc and dmin*m: 2^-11 relative each, times q <= 15.
        const float step = std::fabs(groups[i / 32].scale()), min = std::fabs(groups[i / 32].min());
        ASSERT_NEAR(w, y[i], (15 * step + min) * 1e-3f + 1e-7f) << i;
      }
    }
  }
}

// Q4_K blocks repacked into the int4-g32 panels hold exactly the groups' values.
TEST(GgufBlocksTest, PackInt4GroupsKeepsEveryValue) {
  const int64_t rows = 19, cols = 512;  // a partial last panel
  std::vector<float> x = Random(rows * cols, 11, 0.05f);
  std::vector<uint8_t> blocks(BlockRowBytes(BlockType::kQ4_K, cols) * rows);
  QuantizeBlocks(BlockType::kQ4_K, x.data(), rows * cols, blocks.data());
  std::vector<uint8_t> q(rows * cols);
  std::vector<Int4Group> groups(rows * cols / 32);
  BlocksToInt4Groups(BlockType::kQ4_K, blocks.data(), rows * cols, q.data(), groups.data());
  ThreadPool pool(2);
  PackedWeight packed = PackedWeight::PackInt4Groups(q.data(), groups.data(), rows, cols, 32, &pool);
  EXPECT_EQ(packed.format().dtype, WeightDType::kInt4);
  const std::vector<float> unpacked = packed.Unpack();
  for (int64_t i = 0; i < rows * cols; ++i) {
    ASSERT_EQ(unpacked[i], DequantizeInt4(groups[i / 32], q[i])) << i;
  }
}

// Q8_0 (ggml's reference quantizer) dequantized and packed as int8 groups of 32 keeps
// every value: the group scale is the block's d and the q are its q (QuantizeInt8Group).
TEST(GgufBlocksTest, Q8_0PacksExactlyAsInt8Groups) {
  const int64_t rows = 19, cols = 320;  // a partial last panel
  std::vector<float> x = Random(rows * cols, 12, 0.05f);
  x[5] = 0.0f;
  for (int64_t k = 64; k < 96; ++k) x[k] = 0.0f;  // an all-zero block
  std::vector<uint8_t> blocks(BlockRowBytes(BlockType::kQ8_0, cols) * rows);
  QuantizeBlocks(BlockType::kQ8_0, x.data(), rows * cols, blocks.data());
  std::vector<float> values(rows * cols);
  DequantizeBlocks(BlockType::kQ8_0, blocks.data(), rows * cols, values.data());
  const PackedWeight packed =
      PackedWeight::Pack(values.data(), rows, cols, {WeightDType::kInt8Groups, 32});
  EXPECT_EQ(packed.Unpack(), values);
  // 34 bytes per 32 weights, as the file: 2 panels x 10 groups x (16 x 32 + 16 x 2).
  EXPECT_EQ(packed.size_bytes(), 2 * 10 * (16 * 32 + 32));
}

}  // namespace
}  // namespace surge
