// Measured limits of this machine -- DRAM read bandwidth and the peak of each
// multiply-add instruction the kernels use -- so that benchmarks can report "% of limit"
// against numbers taken on the same machine, in the same run. Benchmark support only.
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"

namespace surge {

struct MachineLimits {
  double read_gb_per_s = 0;    // all threads summing a buffer far beyond the L3
  double f32_fma_gflops = 0;   // independent vfmadd chains, widest vectors, all threads
  double int8_dot_gops = 0;    // vpdpbusd chains (2 ops per u8 x s8 product); 0 without VNNI
  double bf16_dot_gflops = 0;  // vdpbf16ps chains; 0 without AVX512_BF16
  double amx_int8_gops = 0;    // tdpbusd on 4 accumulator tiles per thread; 0 without AMX
  double amx_bf16_gflops = 0;  // tdpbf16ps likewise
};

// GB/s of all pool threads reading `bytes` (allocated and touched here) for ~`seconds`.
double MeasureReadBandwidth(ThreadPool& pool, int64_t bytes, double seconds);
// GFLOP/s (or GOP/s) of independent dependency chains on every pool thread. Zero when
// the CPU lacks the instruction.
double MeasureFmaPeak(ThreadPool& pool, double seconds);
double MeasureInt8DotPeak(ThreadPool& pool, double seconds);
double MeasureBf16DotPeak(ThreadPool& pool, double seconds);
double MeasureAmxPeak(ThreadPool& pool, bool bf16, double seconds);

// All of them, measured once per process (about two seconds) on `pool`.
const MachineLimits& Limits(ThreadPool& pool);

}  // namespace surge
