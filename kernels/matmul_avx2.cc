// The AVX2 + FMA f32 MatMul tile: matmul-inl.h over 8-lane registers.
#include <immintrin.h>

#include <cstdint>

#include "kernels/matmul.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "kernels/x86_avx2-inl.h"

namespace surge {
namespace {

struct Avx2 {
  using Reg = __m256;
  static constexpr int64_t kLanes = kAvx2Lanes;
  // 16 ymm registers: 1x8 or 2x4 accumulators leave room for the loads.
  static constexpr int kRowsFor8Cols = 1;
  static constexpr int kRowsFor4Cols = 2;
  static Reg Zero() { return _mm256_setzero_ps(); }
  static Reg Load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg LoadTail(const float* p, int64_t n) { return Avx2LoadTail(p, n); }
  static Reg Fma(Reg a, Reg b, Reg acc) { return _mm256_fmadd_ps(a, b, acc); }
  static float ReduceAdd(Reg v) { return Avx2ReduceAdd(v); }
};

}  // namespace
}  // namespace surge

#include "kernels/matmul-inl.h"

namespace surge {
namespace {

void TileAvx2(const internal::MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
              int64_t n_end) {
  MatMulTileImpl<Avx2>(t, m_begin, m_end, n_begin, n_end);
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge::internal {

void MatMulTileAvx2(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                    int64_t n_end) {
  TileAvx2(t, m_begin, m_end, n_begin, n_end);
}

}  // namespace surge::internal
