// MatMul throughput for every weight format at decode (M = 1, 8), batched decode (M = 16,
// 32, 64) and prefill (M = 128, 512) sizes of the 110M Llama's linear layers, next to
// this machine's limits measured by the same binary: BM_Limits prints them, and every
// MatMul line reports GB/s of weights read and GFLOP/s with their percentage of those
// limits (%peak: of the int8 dot peak for the integer kernels, bf16 dot for vdpbf16ps).
//
// Decode sizes (M <= 64) read "cold" weights: the matrix is copied until the copies pass
// 1 GiB (beyond the L3) and each call takes the next copy, as a decode step streams every
// layer's weights once from DRAM. Prefill sizes reuse one copy (they are compute-bound).
//
//   build-kern/matmul_bench --benchmark_filter='BM_Limits|MatMul/.*/m:1/'
// SURGE_BENCH_THREADS=1 runs everything on one core.
//
// AMX against AVX-512/VNNI (batched decode m = 32, 64 and prefill m = 512 on the 110M
// shapes and a 4096 x 4096 one; BM_Limits' amx_* counters are the tile peak of the same
// binary; the AMX lines skip where the CPU has none):
//   build/matmul_bench --benchmark_filter='BM_Limits|BM_MatMulAmx'
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/machine_limits.h"
#include "kernels/matmul.h"
#include "kernels/packed_matmul.h"
#include "kernels/packed_weight.h"

namespace surge {
namespace {

// All cores, or SURGE_BENCH_THREADS of them.
ThreadPool& Pool() {
  static ThreadPool* pool = [] {
    const char* threads = std::getenv("SURGE_BENCH_THREADS");
    return new ThreadPool(threads ? std::atoi(threads) : 0);
  }();
  return *pool;
}

constexpr int64_t kColdBytes = int64_t{1} << 30;
constexpr int64_t kMaxColdRows = 64;  // decode batches stream W from DRAM

// Formats by benchmark argument; kRowMajor is the unpacked f32 path for comparison.
const WeightFormat kFormats[] = {{WeightDType::kF32},       {WeightDType::kBF16},
                                 {WeightDType::kInt8},      {WeightDType::kInt4, 32},
                                 {WeightDType::kInt4, 128}, {WeightDType::kInt8Groups, 32}};
constexpr int kNumFormats = 6;
constexpr int kRowMajor = kNumFormats;
// The kernel argument that names internal::AmxKernel (not in every CPU's list).
constexpr int kAmxKernel = 99;

void BM_Limits(benchmark::State& state) {
  MachineLimits l;
  for (auto _ : state) l = Limits(Pool());
  state.counters["read_GB/s"] = l.read_gb_per_s;
  state.counters["f32_fma_GFLOP/s"] = l.f32_fma_gflops;
  state.counters["int8_dot_GOP/s"] = l.int8_dot_gops;
  state.counters["bf16_dot_GFLOP/s"] = l.bf16_dot_gflops;
  state.counters["amx_int8_GOP/s"] = l.amx_int8_gops;
  state.counters["amx_bf16_GFLOP/s"] = l.amx_bf16_gflops;
  state.counters["threads"] = Pool().num_threads();
}
BENCHMARK(BM_Limits)->Iterations(1)->Unit(benchmark::kMillisecond);

// The peak a kernel's multiply-adds are bounded by.
double PeakFor(const internal::PackedKernel& kernel) {
  const MachineLimits& l = Limits(Pool());
  if (kernel.pad_rows_to > 1) {  // the AMX kernels
    return kernel.activations == internal::ActivationFormat::kBf16 ? l.amx_bf16_gflops
                                                                   : l.amx_int8_gops;
  }
  switch (kernel.activations) {
    case internal::ActivationFormat::kU8Offset:
    case internal::ActivationFormat::kS8Groups:
      return l.int8_dot_gops > 0 ? l.int8_dot_gops : l.f32_fma_gflops;
    case internal::ActivationFormat::kBf16:
      return l.bf16_dot_gflops;
    default:
      return l.f32_fma_gflops;
  }
}

// `copies` back-to-back copies of w's panels, each viewed by one WeightMatrix.
struct ColdCopies {
  WeightBuffer bytes;
  std::vector<WeightMatrix> views;

  ColdCopies(const WeightMatrix& w, int64_t copies) {
    const int64_t size = w.num_panels() * w.panel_bytes;
    bytes = AllocateWeightBuffer(size * copies);
    for (int64_t c = 0; c < copies; ++c) {
      std::memcpy(bytes.get() + c * size, w.data, size);
      views.push_back(w);
      views.back().data = bytes.get() + c * size;
    }
  }
};

void BM_MatMul(benchmark::State& state) {
  const int format_index = static_cast<int>(state.range(0));
  const int64_t kernel_index = state.range(1), m = state.range(2), n = state.range(3),
                k = state.range(4);
  const bool row_major = format_index == kRowMajor;
  const WeightFormat format = row_major ? WeightFormat{} : kFormats[format_index];
  auto kernels = internal::PackedKernels(format.dtype, DetectedSimdLevel());
  if (kernel_index == kAmxKernel) {
    if (DetectedSimdLevel() < SimdLevel::kAmx) return state.SkipWithError("no AMX on this CPU");
    kernels = {internal::AmxKernel(format.dtype)};
  } else if (kernel_index >= static_cast<int64_t>(kernels.size())) {
    return state.SkipWithError("no such kernel on this CPU");
  }
  const internal::PackedKernel& kernel = kernels[kernel_index == kAmxKernel ? 0 : kernel_index];
  std::mt19937 rng(0);
  std::normal_distribution<float> dist(0.0f, 0.03f);
  std::vector<float> x(m * k), w(n * k), y(m * n);
  for (float& v : x) v = dist(rng) * 30;
  for (float& v : w) v = dist(rng);
  const PackedWeight packed = PackedWeight::Pack(w.data(), n, k, format);
  const int64_t weight_bytes = row_major ? n * k * 4 : packed.size_bytes();
  const int64_t copies = m > kMaxColdRows ? 1 : (kColdBytes + weight_bytes - 1) / weight_bytes;
  ColdCopies cold(packed.matrix(), row_major ? 1 : copies);
  std::vector<float> row_major_copies(row_major ? copies * n * k : 0);
  for (int64_t c = 0; c < (row_major ? copies : 0); ++c)
    std::memcpy(&row_major_copies[c * n * k], w.data(), n * k * 4);
  const double peak = PeakFor(kernel);  // measured before the clock starts
  int64_t next = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (row_major) {
      MatMul(x.data(), m, F32Weight(&row_major_copies[next * n * k], n, k), nullptr, y.data(),
             &Pool());
    } else {
      internal::PackedMatMul(kernel, x.data(), m, cold.views[next], nullptr, y.data(), &Pool());
    }
    next = next + 1 == copies ? 0 : next + 1;
    benchmark::DoNotOptimize(y.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double gb_per_s = static_cast<double>(weight_bytes) * state.iterations() / seconds / 1e9;
  const double gflops = 2.0 * m * n * k * state.iterations() / seconds / 1e9;
  state.counters["GB/s"] = gb_per_s;
  state.counters["%read_bw"] = 100 * gb_per_s / Limits(Pool()).read_gb_per_s;
  state.counters["GFLOP/s"] = gflops;
  state.counters["%peak"] = peak > 0 ? 100 * gflops / peak : 0;
  state.SetLabel(row_major ? "f32/row-major" : kernel.name);
}

void AddShapes(benchmark::internal::Benchmark* b, int format, int kernel,
               std::initializer_list<std::pair<int64_t, int64_t>> shapes) {
  for (auto [n, k] : shapes)
    for (int64_t m : {1, 8, 16, 32, 64, 128, 512}) b->Args({format, kernel, m, n, k});
}

// All formats on all five 110M shapes; the alternatives and the row-major f32 path on
// two of them.
void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"format", "kernel", "m", "n", "k"});
  for (int format = 0; format < kNumFormats; ++format) {
    AddShapes(b, format, 0, {{768, 768}, {2304, 768}, {4096, 768}, {768, 2048}, {32000, 768}});
  }
  AddShapes(b, 1, 1, {{768, 768}, {4096, 768}});  // bf16 vdpbf16ps
  AddShapes(b, 3, 1, {{768, 768}, {4096, 768}});  // int4 f32-dequant
  AddShapes(b, kRowMajor, 0, {{768, 768}, {4096, 768}});
}

BENCHMARK(BM_MatMul)->Apply(Shapes)->UseRealTime()->MinTime(0.3)->Unit(benchmark::kMicrosecond);

// AMX beside the default kernel of each format (and bf16's vdpbf16ps) where AMX pays:
// batched decode and prefill rows, on the 110M shapes (N x K: attention 768 x 768, FFN
// up 2048 x 768 and down 768 x 2048) and a 7B-sized 4096 x 4096.
void AmxShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"format", "kernel", "m", "n", "k"});
  const std::pair<int64_t, int64_t> shapes[] = {{768, 768}, {2048, 768}, {768, 2048}, {4096, 4096}};
  for (int format : {1, 2, 3, 4}) {
    for (int kernel : {0, 1, kAmxKernel}) {
      if (kernel == 1 && format != 1) continue;  // only bf16 has a second kernel worth it here
      for (auto [n, k] : shapes)
        for (int64_t m : {32, 64, 512}) b->Args({format, kernel, m, n, k});
    }
  }
}
void BM_MatMulAmx(benchmark::State& state) { BM_MatMul(state); }
BENCHMARK(BM_MatMulAmx)
    ->Apply(AmxShapes)
    ->UseRealTime()
    ->MinTime(0.3)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace surge
