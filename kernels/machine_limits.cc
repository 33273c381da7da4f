#include "kernels/machine_limits.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/packed_matmul.h"
#include "kernels/packed_weight.h"
#include "kernels/simd.h"

namespace surge {
namespace {

constexpr int kChains = 12;  // > latency (4) x ports (2): the FMA units never wait
constexpr int64_t kChainSteps = 1 << 20;

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Calls fn(item) for items 0, 1, 2, ... on all pool threads until `seconds` pass;
// returns items done per second.
template <typename Fn>
double ItemsPerSecond(ThreadPool& pool, double seconds, Fn fn) {
  std::atomic<float> sink{0};
  int64_t items = 0;
  const auto start = std::chrono::steady_clock::now();
  while (Seconds(start) < seconds) {
    const int64_t batch = 4 * pool.num_threads();
    pool.ParallelFor(batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) sink.store(fn(items + i), std::memory_order_relaxed);
    });
    items += batch;
  }
  return items / Seconds(start);
}

__attribute__((target("avx512f,fma"))) float FmaChainsAvx512(int64_t seed) {
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * (c + seed));
  const __m512 a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-4f);
  for (int64_t i = 0; i < kChainSteps; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  float sum = 0;
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) sum += _mm512_cvtss_f32(acc[c]);
  return sum;
}

__attribute__((target("avx2,fma"))) float FmaChainsAvx2(int64_t seed) {
  __m256 acc[kChains];
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * (c + seed));
  const __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-4f);
  for (int64_t i = 0; i < kChainSteps; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  float sum = 0;
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) sum += _mm256_cvtss_f32(acc[c]);
  return sum;
}

__attribute__((target("avx512f,avx512vnni"))) float DotChainsInt8(int64_t seed) {
  __m512i acc[kChains];
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_epi32(static_cast<int>(c + seed));
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < kChainSteps; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  int32_t sum = 0;
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) sum += _mm_cvtsi128_si32(_mm512_castsi512_si128(acc[c]));
  return static_cast<float>(sum);
}

__attribute__((target("avx512f,avx512bf16"))) float DotChainsBf16(int64_t seed) {
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * (c + seed));
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3a83);
  for (int64_t i = 0; i < kChainSteps; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  float sum = 0;
#pragma GCC unroll 16
  for (int c = 0; c < kChains; ++c) sum += _mm512_cvtss_f32(acc[c]);
  return sum;
}

__attribute__((target("avx2"))) float SumAvx2(const float* p, int64_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  for (int64_t i = 0; i + 32 <= n; i += 32)
#pragma GCC unroll 16
    for (int c = 0; c < 4; ++c) acc[c] = _mm256_add_ps(acc[c], _mm256_loadu_ps(p + i + 8 * c));
  const __m256 s = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

}  // namespace

double MeasureReadBandwidth(ThreadPool& pool, int64_t bytes, double seconds) {
  // Allocated like the weights (huge pages) and filled with non-zero data, so no page
  // is shared or left unmapped; read in 4 MiB chunks that walk the whole buffer, so
  // nothing is served from the L3.
  WeightBuffer buffer = AllocateWeightBuffer(bytes);
  float* data = reinterpret_cast<float*>(buffer.get());
  const int64_t n = bytes / sizeof(float);
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 1000);
  constexpr int64_t kChunkFloats = 1 << 20;
  const int64_t num_chunks = n / kChunkFloats;
  const bool avx2 = DetectedSimdLevel() >= SimdLevel::kAvx2;
  const double chunks_per_s = ItemsPerSecond(pool, seconds, [&](int64_t i) {
    const float* chunk = data + (i % num_chunks) * kChunkFloats;
    if (avx2) return SumAvx2(chunk, kChunkFloats);
    float sum = 0;
    for (int64_t j = 0; j < kChunkFloats; j += 16) sum += chunk[j];  // one read per line
    return sum;
  });
  return chunks_per_s * kChunkFloats * sizeof(float) / 1e9;
}

double MeasureFmaPeak(ThreadPool& pool, double seconds) {
  const SimdLevel level = DetectedSimdLevel();
  if (level < SimdLevel::kAvx2) return 0;
  const bool wide = level >= SimdLevel::kAvx512;
  const double per_item = 2.0 * (wide ? 16 : 8) * kChains * kChainSteps;
  return per_item / 1e9 * ItemsPerSecond(pool, seconds, wide ? FmaChainsAvx512 : FmaChainsAvx2);
}

double MeasureInt8DotPeak(ThreadPool& pool, double seconds) {
  if (DetectedSimdLevel() < SimdLevel::kAvx512Vnni) return 0;
  const double per_item = 2.0 * 64 * kChains * kChainSteps;
  return per_item / 1e9 * ItemsPerSecond(pool, seconds, DotChainsInt8);
}

double MeasureBf16DotPeak(ThreadPool& pool, double seconds) {
  if (DetectedSimdLevel() < SimdLevel::kAvx512Bf16) return 0;
  const double per_item = 2.0 * 32 * kChains * kChainSteps;
  return per_item / 1e9 * ItemsPerSecond(pool, seconds, DotChainsBf16);
}

// The tile ops live in packed_matmul_amx.cc, beside the kernels: one translation unit
// then tracks which tile config each thread has loaded.
double MeasureAmxPeak(ThreadPool& pool, bool bf16, double seconds) {
  if (DetectedSimdLevel() < SimdLevel::kAmx) return 0;
  constexpr int64_t kIterations = 1 << 16;
  const double per_item = 2.0 * 4 * 16 * 16 * (bf16 ? 32 : 64) * kIterations;
  return per_item / 1e9 * ItemsPerSecond(pool, seconds, [bf16](int64_t) {
           return static_cast<float>(internal::AmxDotLoop(bf16, kIterations));
         });
}

const MachineLimits& Limits(ThreadPool& pool) {
  static const MachineLimits limits = [&] {
    MachineLimits l;
    l.read_gb_per_s = MeasureReadBandwidth(pool, int64_t{1} << 30, 1.0);
    l.f32_fma_gflops = MeasureFmaPeak(pool, 0.3);
    l.int8_dot_gops = MeasureInt8DotPeak(pool, 0.3);
    l.bf16_dot_gflops = MeasureBf16DotPeak(pool, 0.3);
    l.amx_int8_gops = MeasureAmxPeak(pool, /*bf16=*/false, 0.3);
    l.amx_bf16_gflops = MeasureAmxPeak(pool, /*bf16=*/true, 0.3);
    return l;
  }();
  return limits;
}

}  // namespace surge
