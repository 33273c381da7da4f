// MatMul's driver for panel-layout weights: picks the kernel, converts the activations
// once per call into a thread-local grow-only scratch, and splits the output into work
// items of (rows, 4 panels) for the pool.
#include "kernels/packed_matmul.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/check.h"

namespace surge::internal {
namespace {

// A work item covers this many panels (64 outputs): with K = 768 that is 192 KiB of f32
// weights or 48 KiB of int8, which stays in L2 while every row block of the item
// streams past it.
constexpr int64_t kPanelsPerItem = 4;
// Batches above this many rows are also split by rows (a multiple of every kernel's
// row block, 12, 6, 4 or 2, so that items start on a block of the interleaved
// activations).
constexpr int64_t kRowsPerItem = 96;
// Converting fewer activations than this is not worth waking the pool.
constexpr int64_t kMinParallelPrepare = 1 << 15;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Grow-only per thread: after the largest batch has been seen once, no call allocates.
struct Scratch {
  std::vector<uint8_t> data;
  std::vector<float> scales;
  std::vector<float> group_sums;
  std::vector<float> q_sums;
};
thread_local Scratch t_scratch;

template <typename T>
T* GrowTo(std::vector<T>& buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(size);
  return buffer.data();
}

PreparedActivations Prepare(const PackedKernel& kernel, const float* x, int64_t m,
                            const WeightMatrix& w, ThreadPool* pool) {
  PreparedActivations a;
  if (kernel.activations == ActivationFormat::kF32) return a;
  a.stride = PreparedStride(kernel.activations, w);
  a.rows_per_block = kernel.rows_per_block;
  const int64_t row_unit = std::max(a.rows_per_block, kernel.pad_rows_to);
  a.data = GrowTo(t_scratch.data, CeilDiv(m, row_unit) * row_unit * a.stride);
  a.scales = GrowTo(t_scratch.scales, m);
  if (kernel.activations == ActivationFormat::kS8Groups) {
    a.group_size = w.group_size;
    a.num_groups = a.stride / w.group_size;
    a.scales = GrowTo(t_scratch.scales, m * a.num_groups);
    a.group_sums = GrowTo(t_scratch.group_sums, m * a.num_groups);
    a.q_sums = GrowTo(t_scratch.q_sums, m * a.num_groups);
  }
  if (pool == nullptr || m == 1 || m * w.cols < kMinParallelPrepare) {
    kernel.prepare(x, w.cols, 0, m, a);
  } else {
    pool->ParallelFor(
        m, [&](int64_t begin, int64_t end) { kernel.prepare(x, w.cols, begin, end, a); });
  }
  return a;
}

}  // namespace

int64_t PreparedStride(ActivationFormat format, const WeightMatrix& w) {
  switch (format) {
    case ActivationFormat::kF32:
      return 0;
    case ActivationFormat::kBf16:
      return CeilDiv(w.cols, 2) * 2 * 2;
    case ActivationFormat::kU8Offset:
    case ActivationFormat::kS8:
      return CeilDiv(w.cols, 4) * 4;
    case ActivationFormat::kS8Groups:
      return CeilDiv(w.cols, w.group_size) * w.group_size;
  }
  return 0;
}

PackedKernel DefaultPackedKernel(WeightDType dtype, SimdLevel level) {
  if (level >= SimdLevel::kAvx512Bf16 && dtype == WeightDType::kBF16) {
    return Avx512Kernel(dtype);  // widening measured faster than vdpbf16ps: docs/PERF.md
  }
  if (level >= SimdLevel::kAvx512Vnni && (dtype == WeightDType::kInt8 ||
                                           dtype == WeightDType::kInt4 ||
                                           dtype == WeightDType::kInt8Groups)) {
    return Avx512VnniKernel(dtype);
  }
  if (level >= SimdLevel::kAvx512 && (dtype == WeightDType::kF32 || dtype == WeightDType::kBF16)) {
    return Avx512Kernel(dtype);
  }
  if (level >= SimdLevel::kAvx2) return Avx2Kernel(dtype);
  return ScalarKernel(dtype);
}

bool AmxBf16Enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("SURGE_AMX_BF16");
    return env != nullptr && std::strcmp(env, "1") == 0;
  }();
  return enabled;
}

bool AmxEmulated() {
  static const bool emulated = [] {
    const char* env = std::getenv("SURGE_AMX_EMULATE");
    return env != nullptr && std::strcmp(env, "1") == 0;
  }();
  return emulated;
}

PackedKernel PackedKernelFor(WeightDType dtype, SimdLevel level, int64_t m) {
  const bool emulated = AmxEmulated() && level >= SimdLevel::kAvx512Bf16;
  if (level >= SimdLevel::kAmx || emulated) {
    auto amx = [&] { return emulated ? AmxEmulatedKernel(dtype) : AmxKernel(dtype); };
    const bool integer = dtype == WeightDType::kInt8 || dtype == WeightDType::kInt4;
    if (integer && m >= kAmxMinRows) return amx();
    if (dtype == WeightDType::kBF16 && AmxBf16Enabled()) return amx();
  }
  return DefaultPackedKernel(dtype, level);
}

std::vector<PackedKernel> PackedKernels(WeightDType dtype, SimdLevel level) {
  std::vector<PackedKernel> kernels = {DefaultPackedKernel(dtype, level)};
  auto add = [&](PackedKernel k) {
    for (const PackedKernel& have : kernels)
      if (have.tile == k.tile) return;
    kernels.push_back(k);
  };
  if (level >= SimdLevel::kAvx512Bf16 && dtype == WeightDType::kBF16) add(Avx512Bf16DotKernel());
  if (level >= SimdLevel::kAvx512 && dtype == WeightDType::kInt4) add(Avx512Kernel(dtype));
  if (level >= SimdLevel::kAmx && dtype != WeightDType::kF32 && dtype != WeightDType::kInt8Groups)
    add(AmxKernel(dtype));
  return kernels;
}

void PackedMatMul(const PackedKernel& kernel, const float* x, int64_t m, const WeightMatrix& w,
                  const float* bias, float* y, ThreadPool* pool) {
  DCHECK(w.layout == WeightLayout::kPanels);
  DCHECK(kRowsPerItem % kernel.rows_per_block == 0);  // items start on an interleave block
  DCHECK(kRowsPerItem % kernel.pad_rows_to == 0);     // and on an AMX tile of rows
  if (m <= 0 || w.rows <= 0) return;
  const PackedProblem p{&w, x, Prepare(kernel, x, m, w, pool), bias, y};
  const int64_t num_panels = w.num_panels();
  const int64_t column_items = CeilDiv(num_panels, kPanelsPerItem);
  const int64_t row_items = CeilDiv(m, kRowsPerItem);
  // Items in column-major order: neighbours share the same weight panels.
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item % row_items, c = item / row_items;
      kernel.tile(p, r * kRowsPerItem, std::min(m, (r + 1) * kRowsPerItem), c * kPanelsPerItem,
                  std::min(num_panels, (c + 1) * kPanelsPerItem));
    }
  };
  if (pool == nullptr) return run(0, row_items * column_items);
  pool->ParallelFor(row_items * column_items, run);
}

}  // namespace surge::internal
