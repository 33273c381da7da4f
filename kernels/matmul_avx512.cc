// The AVX-512 f32 MatMul tile: matmul-inl.h over 16-lane registers.
// GCC 12's AVX-512 headers build "undefined" registers from themselves and then trip
// -Wuninitialized (GCC bug 105593); silence it for the header's lines only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "kernels/matmul.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma")
#include "kernels/x86_avx512-inl.h"

namespace surge {
namespace {

struct Avx512 {
  using Reg = __m512;
  static constexpr int64_t kLanes = kAvx512Lanes;
  // 32 zmm registers: 2x8 or 4x4 accumulators leave room for the loads.
  static constexpr int kRowsFor8Cols = 2;
  static constexpr int kRowsFor4Cols = 4;
  static Reg Zero() { return _mm512_setzero_ps(); }
  static Reg Load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg LoadTail(const float* p, int64_t n) { return Avx512LoadTail(p, n); }
  static Reg Fma(Reg a, Reg b, Reg acc) { return _mm512_fmadd_ps(a, b, acc); }
  static float ReduceAdd(Reg v) { return Avx512ReduceAdd(v); }
};

}  // namespace
}  // namespace surge

#include "kernels/matmul-inl.h"

namespace surge {
namespace {

void TileAvx512(const internal::MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                int64_t n_end) {
  MatMulTileImpl<Avx512>(t, m_begin, m_end, n_begin, n_end);
}

}  // namespace
}  // namespace surge
#pragma GCC pop_options

namespace surge::internal {

void MatMulTileAvx512(const MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                      int64_t n_end) {
  TileAvx512(t, m_begin, m_end, n_begin, n_end);
}

}  // namespace surge::internal
