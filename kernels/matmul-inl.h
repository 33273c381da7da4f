// The f32 MatMul tile, written once over a vector-ops type `V` and compiled per SIMD
// target by matmul_avx2.cc / matmul_avx512.cc (each includes it inside its
// `#pragma GCC target` region, after defining V). No include guard on purpose.
//
// V provides: type Reg; kLanes; Zero(); Load(p); LoadTail(p, n); Fma(a, b, acc);
// ReduceAdd(reg); and the register-blocking limits kRowsFor8Cols, kRowsFor4Cols.

namespace surge {
namespace {

// y[i0 .. i0+RM, n0 .. n0+RN) for one block: one accumulator register per (row, col)
// walks K front to back, then a masked tail, then a fixed horizontal reduction. Every
// block shape does exactly this per (row, col), which is what makes MatMul batch-invariant.
template <class V, int RM, int RN>
inline void MatMulBlock(const internal::MatMulTile& t, int64_t i0, int64_t n0) {
  const int64_t k = t.k;
  typename V::Reg acc[RM][RN];
#pragma GCC unroll 16
  for (int r = 0; r < RM; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < RN; ++c) acc[r][c] = V::Zero();
  const float* x = t.x + i0 * k;
  const float* w = t.w + n0 * k;
  int64_t kk = 0;
  for (; kk + V::kLanes <= k; kk += V::kLanes) {
    typename V::Reg wv[RN];
#pragma GCC unroll 16
    for (int c = 0; c < RN; ++c) wv[c] = V::Load(w + c * k + kk);
#pragma GCC unroll 16
    for (int r = 0; r < RM; ++r) {
      typename V::Reg xv = V::Load(x + r * k + kk);
#pragma GCC unroll 16
      for (int c = 0; c < RN; ++c) acc[r][c] = V::Fma(xv, wv[c], acc[r][c]);
    }
  }
  if (kk < k) {
    typename V::Reg wv[RN];
#pragma GCC unroll 16
    for (int c = 0; c < RN; ++c) wv[c] = V::LoadTail(w + c * k + kk, k - kk);
#pragma GCC unroll 16
    for (int r = 0; r < RM; ++r) {
      typename V::Reg xv = V::LoadTail(x + r * k + kk, k - kk);
#pragma GCC unroll 16
      for (int c = 0; c < RN; ++c) acc[r][c] = V::Fma(xv, wv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < RM; ++r) {
    float* y = t.y + (i0 + r) * t.ldy + n0;
#pragma GCC unroll 16
    for (int c = 0; c < RN; ++c) y[c] = V::ReduceAdd(acc[r][c]) + (t.bias ? t.bias[n0 + c] : 0.0f);
  }
}

// All rows [m_begin, m_end) against the RN weight rows starting at n0, RM rows at a time.
template <class V, int RN, int RM>
inline void MatMulColumnGroup(const internal::MatMulTile& t, int64_t m_begin, int64_t m_end,
                              int64_t n0) {
  int64_t i = m_begin;
  for (; i + RM <= m_end; i += RM) MatMulBlock<V, RM, RN>(t, i, n0);
  const int64_t rest = m_end - i;
  if constexpr (RM > 1) {
    if (rest == 1) MatMulBlock<V, 1, RN>(t, i, n0);
  }
  if constexpr (RM > 2) {
    if (rest == 2) MatMulBlock<V, 2, RN>(t, i, n0);
  }
  if constexpr (RM > 3) {
    if (rest == 3) MatMulBlock<V, 3, RN>(t, i, n0);
  }
}

// Wide column groups (8 weight rows) when few rows keep the register budget; otherwise
// 4 weight rows x kRowsFor4Cols rows of x.
template <class V>
void MatMulTileImpl(const internal::MatMulTile& t, int64_t m_begin, int64_t m_end, int64_t n_begin,
                    int64_t n_end) {
  int64_t n = n_begin;
  if (m_end - m_begin <= V::kRowsFor8Cols) {
    for (; n + 8 <= n_end; n += 8) MatMulColumnGroup<V, 8, V::kRowsFor8Cols>(t, m_begin, m_end, n);
  }
  for (; n + 4 <= n_end; n += 4) MatMulColumnGroup<V, 4, V::kRowsFor4Cols>(t, m_begin, m_end, n);
  for (; n < n_end; ++n) MatMulColumnGroup<V, 1, 4>(t, m_begin, m_end, n);
}

}  // namespace
}  // namespace surge
