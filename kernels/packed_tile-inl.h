// The loop nest shared by the SIMD kernels for panel-layout weights, written once over a
// kernel type `K` and compiled inside each kernel file's `#pragma GCC target` region (so
// no include guard, and an anonymous namespace). K provides:
//   kMaxRows                       rows of x per register block (the large-batch shape)
//   PanelsFor(rows)                panels per register block of that many rows
//   Block<MR, NP>(p, row, panel)   y[row .. row+MR, 16 panel .. 16 (panel+NP)) over all K
//
// Every block computes each of its outputs with the same per-output arithmetic (see the
// kernel), so the block shapes chosen here never change a result: that is what makes
// the choice free to depend on the batch size without breaking batch invariance.
//
// Every loop over a register block in the kernels carries `#pragma GCC unroll 16`: GCC
// 12 at -O2 does not unroll them, and the accumulator arrays then live in memory (what
// held the old f32 MatMul at ~17% of peak).

namespace surge {
namespace {

template <class K, int MR>
inline void PanelRun(const internal::PackedProblem& p, int64_t row, int64_t panel,
                     int64_t panel_end) {
  constexpr int kPanels = K::PanelsFor(MR);
  for (; panel + kPanels <= panel_end; panel += kPanels)
    K::template Block<MR, kPanels>(p, row, panel);
  if constexpr (kPanels > 2) {
    for (; panel + 2 <= panel_end; panel += 2) K::template Block<MR, 2>(p, row, panel);
  }
  for (; panel < panel_end; ++panel) K::template Block<MR, 1>(p, row, panel);
}

// Runs PanelRun<K, rows> for a run-time row count 1 <= rows <= MR.
template <class K, int MR = K::kMaxRows>
inline void PanelRunRows(int rows, const internal::PackedProblem& p, int64_t row, int64_t panel,
                         int64_t panel_end) {
  if (rows == MR) return PanelRun<K, MR>(p, row, panel, panel_end);
  if constexpr (MR > 1) PanelRunRows<K, MR - 1>(rows, p, row, panel, panel_end);
}

// Panels in groups of 4 (the work item's width); within a group, row blocks of
// kMaxRows re-read the group's weights from L1/L2 rather than from memory.
template <class K>
void PackedTile(const internal::PackedProblem& p, int64_t m_begin, int64_t m_end,
                int64_t panel_begin, int64_t panel_end) {
  constexpr int64_t kGroupPanels = 4;
  for (int64_t group = panel_begin; group < panel_end; group += kGroupPanels) {
    const int64_t group_end = group + kGroupPanels < panel_end ? group + kGroupPanels : panel_end;
    for (int64_t row = m_begin; row < m_end; row += K::kMaxRows) {
      const int64_t rows = m_end - row < K::kMaxRows ? m_end - row : K::kMaxRows;
      PanelRunRows<K>(static_cast<int>(rows), p, row, group, group_end);
    }
  }
}

}  // namespace
}  // namespace surge
