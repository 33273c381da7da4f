// Internal: the interface between MatMul's driver for panel-layout weights
// (packed_matmul.cc) and the kernels of each dtype and SIMD level
// (packed_matmul_{scalar,avx2,avx512,avx512_vnni,avx512_bf16,amx}.cc). Tests and
// benchmarks use it to run a named kernel; the model only calls MatMul.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/simd.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_matrix.h"

namespace surge::internal {

// How a kernel wants x: as given, or converted per row first (into MatMul's scratch).
enum class ActivationFormat {
  kF32,       // x itself
  kBf16,      // bf16 of x in k-pairs (4-byte units), an odd K's pair padded with 0
  kU8Offset,  // uint8 q + 128 (QuantizeActivationRow's q) in k-quads, padded with 128 (= 0)
  kS8,        // int8 q in k-quads, padded with 0
  kS8Groups,  // int8 q per group, stride = groups * group_size, padded with 0, plus group
              // scales and scaled group sums
};

// The converted activations of rows [0, m): `stride` bytes per row, in 4-byte units
// (a k-quad of int8, a k-pair of bf16). Rows are interleaved in blocks of
// rows_per_block = R, so that a kernel's register block of R rows finds unit j of all
// its rows side by side:
//   byte o of row i is at data[(i / R) R stride + (o / 4) 4 R + (i % R) 4 + o % 4]
// (R = 1: plain rows). One pointer then reaches every row of a block with constant
// offsets; with a pointer per row, 12 rows spilled the accumulators out of registers.
struct PreparedActivations {
  uint8_t* data = nullptr;     // [ceil(m / R) * R * stride] bytes, laid out as above
  int64_t stride = 0;          // bytes per row (a multiple of 4)
  int64_t rows_per_block = 1;  // R
  // kU8Offset, kS8: [m], x ~ scale * q over the row. kS8Groups: [m, num_groups], x ~
  // scale * q over each group of group_size values (QuantizeActivationRow on the group):
  // one scale per 32 values for int4-g32, as llama.cpp's Q8_1 activations.
  float* scales = nullptr;
  // kS8Groups: [m, num_groups] scale * (sum of q over the group), the f32 product rounded
  // once (the sum itself is exact), so the kernels broadcast it straight from memory.
  float* group_sums = nullptr;
  // kS8Groups: [m, num_groups] the sum of q over the group itself, as f32 (exact: |sum|
  // <= 128 * 127 < 2^24): the int8-groups kernels take 128 times it off vpdpbusd's sums.
  float* q_sums = nullptr;
  int64_t num_groups = 0;
  int32_t group_size = 0;

  // The first byte of row i's block (rows i - i % R ...).
  uint8_t* Block(int64_t i) const { return data + (i / rows_per_block) * rows_per_block * stride; }
  // Where row i's 4-byte unit j lives.
  uint8_t* Unit(int64_t i, int64_t j) const {
    return Block(i) + (j * rows_per_block + i % rows_per_block) * 4;
  }
};

// One product y[m, N] = x[m, K] · W^T + bias.
struct PackedProblem {
  const WeightMatrix* w;
  const float* x;                   // [m, K]
  PreparedActivations activations;  // unused for kF32
  const float* bias;                // [N] or null
  float* y;                         // [m, N]
};

// Writes y for rows [m_begin, m_end) and output panels [panel_begin, panel_end).
using PackedTileFn = void (*)(const PackedProblem& p, int64_t m_begin, int64_t m_end,
                              int64_t panel_begin, int64_t panel_end);
// Converts rows [row_begin, row_end) of x[*, k] into `out`.
using PrepareFn = void (*)(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out);

struct PackedKernel {
  const char* name = nullptr;  // e.g. "int8/avx512_vnni/vpdpbusd"
  ActivationFormat activations = ActivationFormat::kF32;
  PrepareFn prepare = nullptr;  // null for kF32
  PackedTileFn tile = nullptr;
  // True when every output is bit-identical to the scalar kernel's (same quantized x,
  // same chain); false for the alternatives that compute something else on purpose.
  bool same_bits_as_scalar = true;
  // The interleave R of the prepared activations (the kernel's largest row block).
  int64_t rows_per_block = 1;
  // The scratch holds a multiple of this many rows (AMX: an A tile loads 16 rows; the
  // rows past m hold stale bytes, and their outputs are never stored).
  int64_t pad_rows_to = 1;
};

// The kernel MatMul uses for this dtype on this level whatever the row count (no
// allocation).
PackedKernel DefaultPackedKernel(WeightDType dtype, SimdLevel level);

// From this many rows MatMul runs int8/int4 on AMX where the level has it: the same bits
// as the VNNI kernels (exact integer sums, same epilogue), so switching by m keeps batch
// invariance. Below, most of a 16-row A tile would be padding (and decode is bound by
// reading W, not by multiplying).
constexpr int64_t kAmxMinRows = 16;

// True when SURGE_AMX_BF16=1: bf16 weights then run on AMX (tdpbf16ps) at every m on the
// AMX level. Off by default: x is rounded to bf16 and the chain is not the widening
// kernel's, so outputs (and the bf16 goldens' distances) change; see matmul.h.
bool AmxBf16Enabled();

// True when SURGE_AMX_EMULATE=1 (tests): MatMul then makes the AMX choices above on any
// AVX512_BF16 level, with the emulated tiles (AmxEmulatedKernel) -- how ctest's
// model_test_amx_emulated runs the model's invariance and accuracy tests through the AMX
// kernels' logic on machines without AMX.
bool AmxEmulated();

// The kernel MatMul runs for m rows: DefaultPackedKernel, or AMX as above.
PackedKernel PackedKernelFor(WeightDType dtype, SimdLevel level, int64_t m);

// Every kernel that can run this dtype on this level, the default first (the others are
// the measured alternatives, kept for tests and benchmarks).
std::vector<PackedKernel> PackedKernels(WeightDType dtype, SimdLevel level);

// MatMul through one given kernel: prepares the activations into a thread-local
// grow-only scratch, then splits the output over `pool` (null: this thread).
void PackedMatMul(const PackedKernel& kernel, const float* x, int64_t m, const WeightMatrix& w,
                  const float* bias, float* y, ThreadPool* pool);

// Bytes per prepared row for a format (0 for kF32).
int64_t PreparedStride(ActivationFormat format, const WeightMatrix& w);

// The kernels of each level. Scalar ones run everywhere; the others only where
// DetectedSimdLevel() allows.
PackedKernel ScalarKernel(WeightDType dtype);
PackedKernel Avx2Kernel(WeightDType dtype);
PackedKernel Avx512Kernel(WeightDType dtype);      // f32, bf16 (widened); int4 f32-dequantized
PackedKernel Avx512VnniKernel(WeightDType dtype);  // int8, int4, int8 groups with vpdpbusd
PackedKernel Avx512Bf16DotKernel();                // bf16 with vdpbf16ps
// AMX tiles (packed_matmul_amx.cc): int8 (tdpbusd), int4 (tdpbsud), bf16 (tdpbf16ps);
// f32 gets Avx512Kernel (rounding f32 weights to bf16 per product would be the bf16
// format by another name: pack them as bf16 instead), int8 groups the VNNI kernel.
PackedKernel AmxKernel(WeightDType dtype);
// The same kernels over a C++ model of the tile instructions (kernels/amx_tiles-inl.h):
// tests run them on CPUs without AMX (they need AVX512_BF16 for their epilogues).
PackedKernel AmxEmulatedKernel(WeightDType dtype);
// `iterations` x 4 independent tile ops (tdpbf16ps or tdpbusd) on this thread; returns
// the ops (2 per multiply-add) done. The benchmarks' tile peak; AMX level only.
int64_t AmxDotLoop(bool bf16, int64_t iterations);

// The activation converters in plain C++ (PrepareFn each): the definition the SIMD ones
// match bit for bit (QuantizeActivationRow's q and scale, per row or, for kS8Groups, per
// group of each row).
void PrepareBf16Scalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                       const PreparedActivations& out);
void PrepareU8OffsetScalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out);
void PrepareS8Scalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                     const PreparedActivations& out);
void PrepareS8GroupsScalar(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out);
// The same bits with SIMD (only where the level runs).
void PrepareS8Avx2(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                   const PreparedActivations& out);
void PrepareS8GroupsAvx2(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                         const PreparedActivations& out);
void PrepareU8OffsetAvx512(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out);
void PrepareS8GroupsAvx512(const float* x, int64_t k, int64_t row_begin, int64_t row_end,
                           const PreparedActivations& out);

}  // namespace surge::internal
