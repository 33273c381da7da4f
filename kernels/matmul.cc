#include "kernels/matmul.h"

#include <algorithm>

#include "base/check.h"
#include "kernels/packed_matmul.h"

namespace surge {
namespace {

// Row counts up to this are "decode-like": W is streamed once and split over N only.
constexpr int64_t kSmallM = 4;
// Tile of the large-M path: 32 rows of x and 64 rows of W (with K = 768: 96 KiB and
// 192 KiB, so both stay in L2 while the tile's blocks run).
constexpr int64_t kTileRows = 32;
constexpr int64_t kTileCols = 64;
// The small-M path hands out column ranges in multiples of this (the widest block).
constexpr int64_t kColumnQuantum = 16;

internal::MatMulTileFn TileFnFor(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512:
    case SimdLevel::kAvx512Vnni:
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAmx:
      return internal::MatMulTileAvx512;
    case SimdLevel::kAvx2:
      return internal::MatMulTileAvx2;
    case SimdLevel::kScalar:
      break;
  }
  return internal::MatMulTileScalar;
}

// Splits N into column ranges, about 4 per thread, for m <= kSmallM.
void RunSmallM(internal::MatMulTileFn tile_fn, const internal::MatMulTile& t, int64_t m, int64_t n,
               ThreadPool* pool) {
  int64_t num_threads = pool ? pool->num_threads() : 1;
  int64_t width = (n + 4 * num_threads - 1) / (4 * num_threads);
  width = std::max(kColumnQuantum, (width + kColumnQuantum - 1) / kColumnQuantum * kColumnQuantum);
  int64_t num_ranges = (n + width - 1) / width;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) tile_fn(t, 0, m, r * width, std::min(n, (r + 1) * width));
  };
  if (pool == nullptr) return run(0, num_ranges);
  pool->ParallelFor(num_ranges, 1, run);
}

// Splits the output into kTileRows x kTileCols tiles for larger m.
void RunTiled(internal::MatMulTileFn tile_fn, const internal::MatMulTile& t, int64_t m, int64_t n,
              ThreadPool* pool) {
  int64_t num_row_tiles = (m + kTileRows - 1) / kTileRows;
  int64_t num_col_tiles = (n + kTileCols - 1) / kTileCols;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      int64_t m0 = (tile % num_row_tiles) * kTileRows;
      int64_t n0 = (tile / num_row_tiles) * kTileCols;
      tile_fn(t, m0, std::min(m, m0 + kTileRows), n0, std::min(n, n0 + kTileCols));
    }
  };
  if (pool == nullptr) return run(0, num_row_tiles * num_col_tiles);
  pool->ParallelFor(num_row_tiles * num_col_tiles, 1, run);
}

}  // namespace

namespace internal {

// The portable path: one float accumulator per output, K in order. Fine as a fallback
// for CPUs without AVX2; the SIMD paths are the ones that matter.
void MatMulTileScalar(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                      int64_t n_end) {
  for (int64_t i = m_begin; i < m_end; ++i) {
    const float* x = t.x + i * t.k;
    for (int64_t n = n_begin; n < n_end; ++n) {
      const float* w = t.w + n * t.k;
      float sum = 0.0f;
      for (int64_t k = 0; k < t.k; ++k) sum += x[k] * w[k];
      t.y[i * t.ldy + n] = sum + (t.bias ? t.bias[n] : 0.0f);
    }
  }
}

}  // namespace internal

void MatMulWithLevel(SimdLevel level, const float* x, int64_t m, const WeightMatrix& w,
                     const float* bias, float* y, ThreadPool* pool) {
  CHECK(level <= DetectedSimdLevel());
  if (w.layout == WeightLayout::kPanels) {
    return internal::PackedMatMul(internal::PackedKernelFor(w.dtype, level, m), x, m, w, bias, y,
                                  pool);
  }
  CHECK(w.dtype == WeightDType::kF32) << "MatMul: row-major weights must be f32";
  if (m <= 0 || w.rows <= 0) return;
  internal::MatMulTile tile{x, w.f32(), bias, y, w.cols, w.rows};
  internal::MatMulTileFn tile_fn = TileFnFor(level);
  if (m <= kSmallM) {
    RunSmallM(tile_fn, tile, m, w.rows, pool);
  } else {
    RunTiled(tile_fn, tile, m, w.rows, pool);
  }
}

void MatMul(const float* x, int64_t m, const WeightMatrix& w, const float* bias, float* y,
            ThreadPool* pool) {
  MatMulWithLevel(ActiveSimdLevel(), x, m, w, bias, y, pool);
}

}  // namespace surge
