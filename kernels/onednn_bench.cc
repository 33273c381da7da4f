// The comparison behind docs/PERF.md's "oneDNN?" section: oneDNN's matmul (Debian's
// libdnnl, built only where it is installed) on the 110M Llama shapes in f32 and bf16,
// against which matmul_bench's own kernels are read. Weights get oneDNN's preferred
// layout once (format_tag::any, as PackedWeight packs ours); x is given in the weight
// type (int8: u8 x against s8 W into f32, the VNNI/AMX kernels' operand types). Also
// reports whether a row's result is the same bits alone as inside a batch
// of m -- MatMul's batch-invariance contract, which a drop-in would have to keep.
#include <benchmark/benchmark.h>

#include <cstring>
#include <dnnl.hpp>
#include <random>
#include <vector>

namespace surge {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// y[m, n] = x[m, k] · W^T for one m, with W [n, k] reordered once into oneDNN's layout.
struct OneDnnMatMul {
  dnnl::matmul primitive;
  memory x, w, y;

  OneDnnMatMul(memory::data_type type, int64_t m, int64_t n, int64_t k, const memory& w_nk) {
    const memory::data_type x_type = type == memory::data_type::s8 ? memory::data_type::u8 : type;
    const memory::desc x_md({m, k}, x_type, Tag::ab), y_md({m, n}, memory::data_type::f32, Tag::ab);
    const memory::desc w_any({k, n}, type, Tag::any);
    const dnnl::matmul::primitive_desc pd({x_md, w_any, y_md}, Engine());
    primitive = dnnl::matmul(pd);
    x = memory(x_md, Engine());
    y = memory(y_md, Engine());
    w = memory(pd.weights_desc(), Engine());
    dnnl::stream stream(Engine());
    dnnl::reorder(w_nk, w).execute(stream, const_cast<memory&>(w_nk), w);
    stream.wait();
  }

  void Run() {
    dnnl::stream stream(Engine());
    primitive.execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}});
    stream.wait();
  }
};

// Random x and W in f32, converted to `type` by oneDNN (round to nearest even).
memory Filled(memory::data_type type, const memory::dims& dims, Tag tag, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const memory::desc f32_md(dims, memory::data_type::f32, tag);
  memory f32(f32_md, Engine()), out(memory::desc(dims, type, tag), Engine());
  float* p = static_cast<float*>(f32.get_data_handle());
  for (size_t i = 0; i < f32_md.get_size() / sizeof(float); ++i) p[i] = dist(rng);
  dnnl::stream stream(Engine());
  dnnl::reorder(f32, out).execute(stream, f32, out);
  stream.wait();
  return out;
}

// 1 when every row of a batch-of-m product equals the same row computed alone.
double BatchInvariant(OneDnnMatMul& batch, memory::data_type type, int64_t m, int64_t n, int64_t k,
                      const memory& w_nk) {
  OneDnnMatMul single(type, 1, n, k, w_nk);
  const size_t row_bytes = k * memory::data_type_size(batch.x.get_desc().data_type());
  batch.Run();
  for (int64_t i = 0; i < m; ++i) {
    std::memcpy(single.x.get_data_handle(),
                static_cast<char*>(batch.x.get_data_handle()) + i * row_bytes, row_bytes);
    single.Run();
    if (std::memcmp(single.y.get_data_handle(),
                    static_cast<float*>(batch.y.get_data_handle()) + i * n, n * sizeof(float))) {
      return 0;
    }
  }
  return 1;
}

const memory::data_type kTypes[] = {memory::data_type::f32, memory::data_type::bf16,
                                    memory::data_type::s8};
const char* const kTypeNames[] = {"f32", "bf16", "int8"};

void BM_OneDnnMatMul(benchmark::State& state) {
  const auto type = kTypes[state.range(0)];
  const int64_t m = state.range(1), n = state.range(2), k = state.range(3);
  std::mt19937 rng(0);
  const memory w_nk = Filled(type, {k, n}, Tag::ba, rng);  // W[n, k] row-major = (k, n) "ba"
  OneDnnMatMul mm(type, m, n, k, w_nk);
  const memory x = Filled(mm.x.get_desc().data_type(), {m, k}, Tag::ab, rng);
  std::memcpy(mm.x.get_data_handle(), x.get_data_handle(), x.get_desc().get_size());
  for (auto _ : state) mm.Run();
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.counters["batch_invariant"] = m > 1 ? BatchInvariant(mm, type, m, n, k, w_nk) : 1;
  state.SetLabel(std::string(kTypeNames[state.range(0)]) + " isa " +
                 std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa())));
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"type", "m", "n", "k"});
  for (int type : {0, 1})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{768, 768}, {4096, 768}, {768, 2048}})
      for (int64_t m : {1, 8, 128, 512}) b->Args({type, m, n, k});
}

// matmul_bench's BM_MatMulAmx shapes, for the AMX comparison: bf16 and int8.
void AmxShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"type", "m", "n", "k"});
  for (int type : {1, 2})
    for (auto [n, k] :
         {std::pair<int64_t, int64_t>{768, 768}, {2048, 768}, {768, 2048}, {4096, 4096}})
      for (int64_t m : {32, 64, 512}) b->Args({type, m, n, k});
}
void BM_OneDnnMatMulAmx(benchmark::State& state) { BM_OneDnnMatMul(state); }
BENCHMARK(BM_OneDnnMatMulAmx)
    ->Apply(AmxShapes)
    ->UseRealTime()
    ->MinTime(0.3)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OneDnnMatMul)
    ->Apply(Shapes)
    ->UseRealTime()
    ->MinTime(0.3)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace surge
