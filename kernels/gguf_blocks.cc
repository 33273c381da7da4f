#include "kernels/gguf_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/check.h"

namespace surge {
namespace {

float LoadF16(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return F16ToFloat(bits);
}
void StoreF16(uint8_t* p, float x) {
  uint16_t bits = FloatToF16(x);
  std::memcpy(p, &bits, 2);
}

// ---- Q8_0 ----
void DequantizeQ8_0(const uint8_t* b, float* y) {
  const float d = LoadF16(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<int8_t>(b[2 + j]) * d;
}
void QuantizeQ8_0(const float* x, uint8_t* b) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
  StoreF16(b, d);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[j] * id)));
}

// ---- Q4_0 ----
void DequantizeQ4_0(const uint8_t* b, float* y) {
  const float d = LoadF16(b);
  for (int j = 0; j < 16; ++j) {
    y[j] = ((b[2 + j] & 0x0f) - 8) * d;
    y[j + 16] = ((b[2 + j] >> 4) - 8) * d;
  }
}
void QuantizeQ4_0(const float* x, uint8_t* b) {
  float amax = 0, max = 0;  // max: the value of largest magnitude, with its sign
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
  StoreF16(b, d);
  for (int j = 0; j < 16; ++j) {
    const uint8_t lo = std::min<uint8_t>(15, static_cast<int8_t>(x[j] * id + 8.5f));
    const uint8_t hi = std::min<uint8_t>(15, static_cast<int8_t>(x[j + 16] * id + 8.5f));
    b[2 + j] = lo | static_cast<uint8_t>(hi << 4);
  }
}

// ---- Q4_1, Q5_0, Q5_1 ----
void DequantizeQ4_1(const uint8_t* b, float* y) {
  const float d = LoadF16(b), m = LoadF16(b + 2);
  for (int j = 0; j < 16; ++j) {
    y[j] = (b[4 + j] & 0x0f) * d + m;
    y[j + 16] = (b[4 + j] >> 4) * d + m;
  }
}
void QuantizeQ4_1(const float* x, uint8_t* b) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < 32; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  const float d = (hi - lo) / 15.0f, id = d != 0 ? 1.0f / d : 0.0f;
  StoreF16(b, d);
  StoreF16(b + 2, lo);
  for (int j = 0; j < 16; ++j) {
    const uint8_t q0 = std::min<uint8_t>(15, static_cast<int8_t>((x[j] - lo) * id + 0.5f));
    const uint8_t q1 = std::min<uint8_t>(15, static_cast<int8_t>((x[j + 16] - lo) * id + 0.5f));
    b[4 + j] = q0 | static_cast<uint8_t>(q1 << 4);
  }
}
// The 5-bit values of a Q5_0/Q5_1 block whose qh starts at `qh` and qs at `qs`.
void Unpack5(const uint8_t* qh_bytes, const uint8_t* qs, int* q) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    q[j] = (qs[j] & 0x0f) | static_cast<int>(((qh >> j) << 4) & 0x10);
    q[j + 16] = (qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10);
  }
}
void Pack5(const int* q, uint8_t* qh_bytes, uint8_t* qs) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0x0f) | ((q[j + 16] & 0x0f) << 4));
    qh |= static_cast<uint32_t>((q[j] & 0x10) >> 4) << j;
    qh |= static_cast<uint32_t>((q[j + 16] & 0x10) >> 4) << (j + 16);
  }
  std::memcpy(qh_bytes, &qh, 4);
}
void DequantizeQ5_0(const uint8_t* b, float* y) {
  const float d = LoadF16(b);
  int q[32];
  Unpack5(b + 2, b + 6, q);
  for (int j = 0; j < 32; ++j) y[j] = (q[j] - 16) * d;
}
void QuantizeQ5_0(const float* x, uint8_t* b) {
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -16.0f, id = d != 0 ? 1.0f / d : 0.0f;
  StoreF16(b, d);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = std::min(31, static_cast<int>(static_cast<int8_t>(x[j] * id + 16.5f)));
  Pack5(q, b + 2, b + 6);
}
void DequantizeQ5_1(const uint8_t* b, float* y) {
  const float d = LoadF16(b), m = LoadF16(b + 2);
  int q[32];
  Unpack5(b + 4, b + 8, q);
  for (int j = 0; j < 32; ++j) y[j] = q[j] * d + m;
}
void QuantizeQ5_1(const float* x, uint8_t* b) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < 32; ++j) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  const float d = (hi - lo) / 31.0f, id = d != 0 ? 1.0f / d : 0.0f;
  StoreF16(b, d);
  StoreF16(b + 2, lo);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>((x[j] - lo) * id + 0.5f);
  Pack5(q, b + 4, b + 8);
}

// ---- Q4_K ----
// Scale and min of sub-block j (ggml's get_scale_min_k4).
void ScaleMinK4(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}
uint8_t Q4KNibble(const uint8_t* qs, int e) {
  const uint8_t byte = qs[(e / 64) * 32 + e % 32];
  return (e % 64) < 32 ? (byte & 0x0f) : (byte >> 4);
}
void DequantizeQ4_K(const uint8_t* b, float* y) {
  const float d = LoadF16(b), dmin = LoadF16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qs = b + 16;
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    ScaleMinK4(s, scales, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    for (int l = 0; l < 32; ++l) y[32 * s + l] = d1 * Q4KNibble(qs, 32 * s + l) - m1;
  }
}
// Q4_K (levels 15) and Q5_K (levels 31; 5th bits into qh) by round-to-nearest: per
// sub-block min/max, then 6-bit scales and mins relative to the super-block's d, dmin.
void QuantizeKQuant(const float* x, int levels, uint8_t* b) {
  float scale[8], min[8];  // per sub-block: w ~ scale * q - min, q in [0, levels], min >= 0
  float max_scale = 0, max_min = 0;
  for (int s = 0; s < 8; ++s) {
    float lo = 0, hi = 0;  // lo <= 0: the min is stored as a non-negative 6-bit count
    for (int l = 0; l < 32; ++l) {
      lo = std::min(lo, x[32 * s + l]);
      hi = std::max(hi, x[32 * s + l]);
    }
    scale[s] = (hi - lo) / levels;
    min[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, min[s]);
  }
  StoreF16(b, max_scale / 63.0f);
  StoreF16(b + 2, max_min / 63.0f);
  const float d_stored = LoadF16(b), dmin_stored = LoadF16(b + 2);
  uint8_t* scales = b + 4;
  const bool five_bit = levels == 31;
  uint8_t* qh = five_bit ? b + 16 : nullptr;
  uint8_t* qs = five_bit ? b + 48 : b + 16;
  std::memset(scales, 0, five_bit ? 12 + 32 + 128 : 12 + 128);
  for (int s = 0; s < 8; ++s) {
    const uint8_t sc = d_stored > 0 ? std::min(63, static_cast<int>(std::lround(scale[s] / d_stored))) : 0;
    const uint8_t m = dmin_stored > 0 ? std::min(63, static_cast<int>(std::lround(min[s] / dmin_stored))) : 0;
    if (s < 4) {
      scales[s] = sc;
      scales[s + 4] = m;
    } else {
      scales[s + 4] = (sc & 0x0f) | static_cast<uint8_t>((m & 0x0f) << 4);
      scales[s - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
      scales[s] |= static_cast<uint8_t>((m >> 4) << 6);
    }
    const float step = d_stored * sc, offset = dmin_stored * m;
    for (int l = 0; l < 32; ++l) {
      const int e = 32 * s + l;
      const long q = step > 0 ? std::clamp<long>(std::lround((x[e] + offset) / step), 0, levels) : 0;
      const uint8_t nibble = static_cast<uint8_t>(q & 0x0f);
      qs[(e / 64) * 32 + e % 32] |= (e % 64) < 32 ? nibble : static_cast<uint8_t>(nibble << 4);
      if (five_bit && q > 15) qh[l] |= static_cast<uint8_t>(1u << s);
    }
  }
}
void QuantizeQ4_K(const float* x, uint8_t* b) { QuantizeKQuant(x, 15, b); }
void QuantizeQ5_K(const float* x, uint8_t* b) { QuantizeKQuant(x, 31, b); }
void DequantizeQ5_K(const uint8_t* b, float* y) {
  const float d = LoadF16(b), dmin = LoadF16(b + 2);
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    ScaleMinK4(s, b + 4, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    for (int l = 0; l < 32; ++l) {
      const int q = Q4KNibble(qs, 32 * s + l) + ((qh[l] >> s) & 1) * 16;
      y[32 * s + l] = d1 * q - m1;
    }
  }
}

// ---- Q6_K ----
int Q6KValue(const uint8_t* b, int e) {  // q in [0, 63]
  const int h = e / 128, i = e % 128, l = i % 32, part = i / 32;
  const uint8_t* ql = b + 64 * h;
  const uint8_t qh = b[128 + 32 * h + l];
  const uint8_t low = part % 2 == 0 ? ql[l] : ql[l + 32];
  const int low4 = part < 2 ? (low & 0x0f) : (low >> 4);
  return low4 | (((qh >> (2 * part)) & 3) << 4);
}
void DequantizeQ6_K(const uint8_t* b, float* y) {
  const float d = LoadF16(b + 208);
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
  for (int e = 0; e < 256; ++e) y[e] = d * scales[e / 16] * (Q6KValue(b, e) - 32);
}
void QuantizeQ6_K(const float* x, uint8_t* b) {
  float scale[16], max_abs_scale = 0;  // per 16 values: w ~ scale * (q - 32), q - 32 in [-32, 31]
  for (int s = 0; s < 16; ++s) {
    float amax = 0;
    for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * s + l]));
    scale[s] = amax / 31.0f;
    max_abs_scale = std::max(max_abs_scale, scale[s]);
  }
  const float d = max_abs_scale / 127.0f;
  StoreF16(b + 208, d);
  const float d_stored = LoadF16(b + 208);
  std::memset(b, 0, 208);
  for (int s = 0; s < 16; ++s) {
    const int sc = d_stored > 0 ? std::min(127, static_cast<int>(std::lround(scale[s] / d_stored))) : 0;
    b[192 + s] = static_cast<uint8_t>(static_cast<int8_t>(sc));
    const float step = d_stored * sc;
    for (int l = 0; l < 16; ++l) {
      const int e = 16 * s + l;
      const long q = (step > 0 ? std::clamp<long>(std::lround(x[e] / step), -32, 31) : 0) + 32;
      const int h = e / 128, i = e % 128, ll = i % 32, part = i / 32;
      uint8_t& low = b[64 * h + ll + (part % 2) * 32];
      low |= part < 2 ? static_cast<uint8_t>(q & 0x0f) : static_cast<uint8_t>((q & 0x0f) << 4);
      b[128 + 32 * h + ll] |= static_cast<uint8_t>((q >> 4) << (2 * part));
    }
  }
}

}  // namespace

const char* BlockTypeName(BlockType type) {
  switch (type) {
    case BlockType::kF32: return "F32";
    case BlockType::kF16: return "F16";
    case BlockType::kBF16: return "BF16";
    case BlockType::kQ8_0: return "Q8_0";
    case BlockType::kQ4_0: return "Q4_0";
    case BlockType::kQ4_1: return "Q4_1";
    case BlockType::kQ5_0: return "Q5_0";
    case BlockType::kQ5_1: return "Q5_1";
    case BlockType::kQ4_K: return "Q4_K";
    case BlockType::kQ5_K: return "Q5_K";
    case BlockType::kQ6_K: return "Q6_K";
  }
  return "?";
}

int64_t BlockElements(BlockType type) {
  switch (type) {
    case BlockType::kQ8_0: case BlockType::kQ4_0: case BlockType::kQ4_1:
    case BlockType::kQ5_0: case BlockType::kQ5_1: return 32;
    case BlockType::kQ4_K: case BlockType::kQ5_K: case BlockType::kQ6_K: return 256;
    default: return 1;
  }
}

int64_t BlockBytes(BlockType type) {
  switch (type) {
    case BlockType::kF32: return 4;
    case BlockType::kF16: case BlockType::kBF16: return 2;
    case BlockType::kQ8_0: return 34;
    case BlockType::kQ4_0: return 18;
    case BlockType::kQ4_1: return 20;
    case BlockType::kQ5_0: return 22;
    case BlockType::kQ5_1: return 24;
    case BlockType::kQ4_K: return 144;
    case BlockType::kQ5_K: return 176;
    case BlockType::kQ6_K: return 210;
  }
  return 0;
}

void DequantizeBlocks(BlockType type, const uint8_t* src, int64_t n, float* dst) {
  const int64_t be = BlockElements(type), bb = BlockBytes(type);
  CHECK(n % be == 0) << BlockTypeName(type) << " row of " << n;
  for (int64_t i = 0; i < n / be; ++i) {
    const uint8_t* b = src + i * bb;
    float* y = dst + i * be;
    switch (type) {
      case BlockType::kF32: std::memcpy(y, b, 4); break;
      case BlockType::kF16: *y = LoadF16(b); break;
      case BlockType::kBF16: {
        uint16_t bits;
        std::memcpy(&bits, b, 2);
        *y = Bf16ToFloat(bits);
        break;
      }
      case BlockType::kQ8_0: DequantizeQ8_0(b, y); break;
      case BlockType::kQ4_0: DequantizeQ4_0(b, y); break;
      case BlockType::kQ4_1: DequantizeQ4_1(b, y); break;
      case BlockType::kQ5_0: DequantizeQ5_0(b, y); break;
      case BlockType::kQ5_1: DequantizeQ5_1(b, y); break;
      case BlockType::kQ4_K: DequantizeQ4_K(b, y); break;
      case BlockType::kQ5_K: DequantizeQ5_K(b, y); break;
      case BlockType::kQ6_K: DequantizeQ6_K(b, y); break;
    }
  }
}

void QuantizeBlocks(BlockType type, const float* src, int64_t n, uint8_t* dst) {
  const int64_t be = BlockElements(type), bb = BlockBytes(type);
  CHECK(n % be == 0) << BlockTypeName(type) << " row of " << n;
  for (int64_t i = 0; i < n / be; ++i) {
    const float* x = src + i * be;
    uint8_t* b = dst + i * bb;
    switch (type) {
      case BlockType::kF32: std::memcpy(b, x, 4); break;
      case BlockType::kF16: StoreF16(b, *x); break;
      case BlockType::kBF16: {
        uint16_t bits = FloatToBf16(*x);
        std::memcpy(b, &bits, 2);
        break;
      }
      case BlockType::kQ8_0: QuantizeQ8_0(x, b); break;
      case BlockType::kQ4_0: QuantizeQ4_0(x, b); break;
      case BlockType::kQ4_1: QuantizeQ4_1(x, b); break;
      case BlockType::kQ5_0: QuantizeQ5_0(x, b); break;
      case BlockType::kQ5_1: QuantizeQ5_1(x, b); break;
      case BlockType::kQ4_K: QuantizeQ4_K(x, b); break;
      case BlockType::kQ5_K: QuantizeQ5_K(x, b); break;
      case BlockType::kQ6_K: QuantizeQ6_K(x, b); break;
    }
  }
}

bool HasInt4Groups(BlockType type) {
  return type == BlockType::kQ4_0 || type == BlockType::kQ4_1 || type == BlockType::kQ4_K;
}

void BlocksToInt4Groups(BlockType type, const uint8_t* src, int64_t n, uint8_t* q,
                        Int4Group* groups) {
  CHECK(HasInt4Groups(type) && n % BlockElements(type) == 0) << BlockTypeName(type);
  if (type == BlockType::kQ4_0) {
    for (int64_t i = 0; i < n / 32; ++i) {
      const uint8_t* b = src + i * 18;
      const float d = LoadF16(b);
      groups[i] = {FloatToF16(d), FloatToF16(-8.0f * d)};
      for (int j = 0; j < 16; ++j) {
        q[32 * i + j] = b[2 + j] & 0x0f;
        q[32 * i + j + 16] = b[2 + j] >> 4;
      }
    }
    return;
  }
  if (type == BlockType::kQ4_1) {
    for (int64_t i = 0; i < n / 32; ++i) {
      const uint8_t* b = src + i * 20;
      uint16_t d, m;
      std::memcpy(&d, b, 2);
      std::memcpy(&m, b + 2, 2);
      groups[i] = {d, m};
      for (int j = 0; j < 16; ++j) {
        q[32 * i + j] = b[4 + j] & 0x0f;
        q[32 * i + j + 16] = b[4 + j] >> 4;
      }
    }
    return;
  }
  for (int64_t i = 0; i < n / 256; ++i) {
    const uint8_t* b = src + i * 144;
    const float d = LoadF16(b), dmin = LoadF16(b + 2);
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      ScaleMinK4(s, b + 4, &sc, &m);
      groups[8 * i + s] = {FloatToF16(d * sc), FloatToF16(-(dmin * m))};
      for (int l = 0; l < 32; ++l) q[256 * i + 32 * s + l] = Q4KNibble(b + 16, 32 * s + l);
    }
  }
}

}  // namespace surge
