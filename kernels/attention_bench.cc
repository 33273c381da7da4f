// Paged decode attention for every KV cache format: one decode query per sequence for a
// batch of 16 sequences, all kv heads spread over the pool, as one layer of a decode
// step runs it. Reports GB/s of K/V read (rows, scales included) next to this machine's
// read bandwidth (BM_Limits, same binary).
//
// Reads are "cold": the pool holds copies of the sequences' K/V past 1 GiB (beyond the
// L3) and each iteration takes the next 16 sequences, as a decode step streams every
// sequence's cache once from DRAM.
//
//   build/kernels/attention_bench --benchmark_filter='BM_Limits|BM_PagedAttention'
// SURGE_BENCH_THREADS=1 runs everything on one core.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/attention.h"
#include "kernels/kv_codec.h"
#include "kernels/machine_limits.h"
#include "kernels/thread_pool.h"

namespace surge {
namespace {

ThreadPool& Pool() {
  static ThreadPool* pool = [] {
    const char* threads = std::getenv("SURGE_BENCH_THREADS");
    return new ThreadPool(threads ? std::atoi(threads) : 0);
  }();
  return *pool;
}

constexpr int64_t kColdBytes = int64_t{1} << 30;
constexpr int32_t kBatch = 16;
constexpr int32_t kBlockSize = 16;
constexpr KvDType kDTypes[] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8,
                               KvDType::kInt4};

void BM_Limits(benchmark::State& state) {
  MachineLimits l;
  for (auto _ : state) l = Limits(Pool());
  state.counters["read_GB/s"] = l.read_gb_per_s;
  state.counters["f32_fma_GFLOP/s"] = l.f32_fma_gflops;
  state.counters["bf16_dot_GFLOP/s"] = l.bf16_dot_gflops;
  state.counters["amx_bf16_GFLOP/s"] = l.amx_bf16_gflops;
  state.counters["threads"] = Pool().num_threads();
}
BENCHMARK(BM_Limits)->Iterations(1)->Unit(benchmark::kMillisecond);

// Copies of one sequence's K/V (random rows quantized once) past kColdBytes, at least
// min_copies of them, each copy's blocks in its own table: stepping to the next copy
// each iteration reads K/V from DRAM, as a decode step streams a cache once.
struct ColdKv {
  std::vector<uint8_t> k, v;  // [num_copies * blocks_per_seq, num_kv_heads, kBlockSize] rows
  std::vector<std::vector<int32_t>> tables;  // [num_copies][blocks_per_seq]
  int64_t seq_bytes = 0;  // one copy's K and V
};

ColdKv MakeColdKv(KvDType dtype, int32_t context, int32_t num_kv_heads, int32_t head_dim,
                  int64_t min_copies, std::mt19937& rng) {
  ColdKv cold;
  const int64_t row_bytes = KvRowBytes(dtype, head_dim);
  const int32_t blocks_per_seq = (context + kBlockSize - 1) / kBlockSize;
  const int64_t block_bytes = int64_t{kBlockSize} * num_kv_heads * row_bytes;  // K or V
  cold.seq_bytes = 2 * blocks_per_seq * block_bytes;
  const int64_t num_copies =
      std::max<int64_t>(min_copies, (kColdBytes + cold.seq_bytes - 1) / cold.seq_bytes);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(head_dim);
  std::vector<uint8_t> one(blocks_per_seq * block_bytes);
  for (int64_t r = 0; r < int64_t{blocks_per_seq} * kBlockSize * num_kv_heads; ++r) {
    for (float& value : x) value = dist(rng);
    QuantizeKvRow(dtype, x.data(), head_dim, &one[r * row_bytes]);
  }
  cold.k.resize(num_copies * one.size());
  cold.v.resize(cold.k.size());
  for (int64_t c = 0; c < num_copies; ++c) {
    std::memcpy(&cold.k[c * one.size()], one.data(), one.size());
    std::memcpy(&cold.v[c * one.size()], one.data(), one.size());
  }
  cold.tables.assign(num_copies, std::vector<int32_t>(blocks_per_seq));
  for (int64_t c = 0; c < num_copies; ++c)
    for (int32_t b = 0; b < blocks_per_seq; ++b)
      cold.tables[c][b] = static_cast<int32_t>(c * blocks_per_seq + b);
  return cold;
}

// Args: dtype index, context length, query heads, kv heads, head_dim.
void BM_PagedAttention(benchmark::State& state) {
  const KvDType dtype = kDTypes[state.range(0)];
  const int32_t context = static_cast<int32_t>(state.range(1));
  const int32_t num_heads = static_cast<int32_t>(state.range(2));
  const int32_t num_kv_heads = static_cast<int32_t>(state.range(3));
  const int32_t head_dim = static_cast<int32_t>(state.range(4));
  std::mt19937 rng(0);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  ColdKv cold = MakeColdKv(dtype, context, num_kv_heads, head_dim, kBatch, rng);
  const int64_t seq_bytes = cold.seq_bytes;
  const int64_t num_seqs = static_cast<int64_t>(cold.tables.size());
  const auto& tables = cold.tables;
  std::vector<float> q(int64_t{kBatch} * num_heads * head_dim), out(q.size());
  for (float& value : q) value = dist(rng);
  const PagedKvView view{cold.k.data(), cold.v.data(), kBlockSize, num_kv_heads, head_dim, dtype};
  const double read_limit = Limits(Pool()).read_gb_per_s;  // measured before the clock starts
  int64_t next = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Pool().ParallelFor(int64_t{kBatch} * num_kv_heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t i = item / num_kv_heads;
        const int64_t stride = int64_t{num_heads} * head_dim;
        const AttentionQueries queries{&q[i * stride],
                                       stride,
                                       &out[i * stride],
                                       stride,
                                       1,
                                       num_heads,
                                       context - 1,
                                       tables[(next + i) % num_seqs],
                                       1.0f / std::sqrt(float(head_dim))};
        PagedAttention(view, queries, 0, static_cast<int32_t>(item % num_kv_heads));
      }
    });
    next = (next + kBatch) % num_seqs;
    benchmark::DoNotOptimize(out.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double gb_per_s = double(seq_bytes) * kBatch * state.iterations() / seconds / 1e9;
  state.counters["GB/s"] = gb_per_s;
  state.counters["%read_bw"] = 100 * gb_per_s / read_limit;
  state.counters["tokens/s"] = double(context) * kBatch * state.iterations() / seconds;
  state.counters["bytes/token"] = double(seq_bytes) / context;
  // Per CPU-second of the benchmark thread: with SURGE_BENCH_THREADS=1 (the caller runs
  // every item) this is the kernel's own speed, unaffected by other load on the machine.
  state.counters["GB/cpu_s"] = benchmark::Counter(
      double(seq_bytes) * kBatch * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(std::string(KvDTypeName(dtype)) + "/" + SimdLevelName(ActiveSimdLevel()));
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t dtype = 0; dtype < 5; ++dtype) {
    for (int64_t context : {512, 2048}) b->Args({dtype, context, 12, 12, 64});  // llama-110m
    b->Args({dtype, 2048, 32, 8, 128});  // Llama-3-8B's heads: GQA 4, head_dim 128
  }
}
BENCHMARK(BM_PagedAttention)
    ->Apply(Shapes)
    ->ArgNames({"dtype", "ctx", "heads", "kv_heads", "dim"})
    ->MinTime(0.3)
    ->Unit(benchmark::kMicrosecond);

// Long-context decode: ONE sequence's decode query at the end of `ctx` keys, all kv
// heads, as one layer of a decode step with nothing else in the batch runs it. Mode 0 is
// the path without the split (one PagedAttention item per kv head, what
// ForwardPass::Attend runs for a lone decode before flash-decoding); mode 1 is
// PagedDecodeAttention (one item per (kv head, 512-key partition), then the merges).
// Both compute the same bits. K/V are cold as in BM_PagedAttention (copies of the
// sequence past 1 GiB, the next copy each iteration). ms per step is the time column.
//
//   SURGE_BENCH_THREADS=1 build/attention_bench --benchmark_filter='BM_Limits|BM_LongDecode'
//   SURGE_BENCH_THREADS=2 build/attention_bench --benchmark_filter='BM_Limits|BM_LongDecode'
void BM_LongDecode(benchmark::State& state) {
  const KvDType dtype = kDTypes[state.range(0)];
  const int32_t context = static_cast<int32_t>(state.range(1));
  const int32_t num_heads = static_cast<int32_t>(state.range(2));
  const int32_t num_kv_heads = static_cast<int32_t>(state.range(3));
  const int32_t head_dim = static_cast<int32_t>(state.range(4));
  const bool split = state.range(5) != 0;
  std::mt19937 rng(0);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  ColdKv cold = MakeColdKv(dtype, context, num_kv_heads, head_dim, 1, rng);
  const int64_t seq_bytes = cold.seq_bytes;
  const int64_t num_copies = static_cast<int64_t>(cold.tables.size());
  const int64_t stride = int64_t{num_heads} * head_dim;
  std::vector<float> q(stride), out(stride);
  for (float& value : q) value = dist(rng);
  std::vector<float> partials(AttentionPartialsFloats(num_heads, head_dim, context));
  const PagedKvView view{cold.k.data(), cold.v.data(), kBlockSize, num_kv_heads, head_dim, dtype};
  const double read_limit = Limits(Pool()).read_gb_per_s;  // measured before the clock starts
  int64_t next = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const AttentionQueries queries{q.data(), stride,  out.data(),    stride,
                                   1,        num_heads, context - 1, cold.tables[next],
                                   1.0f / std::sqrt(float(head_dim))};
    if (split) {
      PagedDecodeAttention(Pool(), view, queries, 0, partials.data());
    } else {
      Pool().ParallelFor(num_kv_heads, 1, [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g)
          PagedAttention(view, queries, 0, static_cast<int32_t>(g));
      });
    }
    next = (next + 1) % num_copies;
    benchmark::DoNotOptimize(out.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double gb_per_s = double(seq_bytes) * state.iterations() / seconds / 1e9;
  state.counters["GB/s"] = gb_per_s;
  state.counters["%read_bw"] = 100 * gb_per_s / read_limit;
  state.counters["threads"] = Pool().num_threads();
  state.SetLabel(std::string(KvDTypeName(dtype)) + "/" + SimdLevelName(ActiveSimdLevel()) +
                 (split ? "/split" : "/unsplit"));
}

void LongDecodeShapes(benchmark::internal::Benchmark* b) {
  for (int64_t dtype : {0, 3}) {  // f32 (the default cache) and int8
    for (int64_t context : {1024, 4096, 16384, 32768}) {
      for (int64_t split : {0, 1}) {
        b->Args({dtype, context, 12, 12, 64, split});   // llama-110m
        b->Args({dtype, context, 32, 8, 128, split});   // Llama-3-8B's heads: GQA 4
        b->Args({dtype, context, 8, 1, 128, split});    // one kv head (GQA 8)
      }
    }
  }
}
BENCHMARK(BM_LongDecode)
    ->Apply(LongDecodeShapes)
    ->ArgNames({"dtype", "ctx", "heads", "kv_heads", "dim", "split"})
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);

// Prefill attention: one sequence's chunk of `queries` queries at the end of a context
// of `ctx` positions (query j sees ctx - queries + j + 1 keys), all kv heads, as one
// layer of a prefill step runs it. Mode 0 calls PagedAttention once per (query, kv
// head), the per-query path; mode 1 calls PagedAttentionQueries on tiles of
// kMaxPagedAttentionQueryTile queries. K/V are warm (one sequence: a few MiB), as in a
// prefill that has just written them. pairs/s counts (query, cached position) pairs,
// all heads of a pair together; GFLOP/s counts 4 * head_dim flops per (head, pair).
//
//   SURGE_BENCH_THREADS=1 build/kernels/attention_bench --benchmark_filter=BM_PagedPrefill
void BM_PagedPrefill(benchmark::State& state) {
  const KvDType dtype = kDTypes[state.range(0)];
  const int32_t context = static_cast<int32_t>(state.range(1));
  const int32_t num_queries = static_cast<int32_t>(state.range(2));
  const int32_t num_heads = static_cast<int32_t>(state.range(3));
  const int32_t num_kv_heads = static_cast<int32_t>(state.range(4));
  const int32_t head_dim = static_cast<int32_t>(state.range(5));
  const bool tiled = state.range(6) != 0;
  const int64_t row_bytes = KvRowBytes(dtype, head_dim);
  const int32_t num_blocks = (context + kBlockSize - 1) / kBlockSize;
  std::mt19937 rng(0);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(head_dim);
  // [num_blocks, num_kv_heads, kBlockSize] rows each
  std::vector<uint8_t> k(int64_t{num_blocks} * num_kv_heads * kBlockSize * row_bytes), v(k.size());
  for (int64_t r = 0; r < int64_t{num_blocks} * num_kv_heads * kBlockSize; ++r) {
    for (float& value : x) value = dist(rng);
    QuantizeKvRow(dtype, x.data(), head_dim, &k[r * row_bytes]);
    for (float& value : x) value = dist(rng);
    QuantizeKvRow(dtype, x.data(), head_dim, &v[r * row_bytes]);
  }
  std::vector<int32_t> table(num_blocks);
  for (int32_t b = 0; b < num_blocks; ++b) table[b] = num_blocks - 1 - b;  // not in order
  const int64_t stride = int64_t{num_heads} * head_dim;
  std::vector<float> q(num_queries * stride), out(q.size());  // [num_queries, num_heads * head_dim]
  for (float& value : q) value = dist(rng);
  const PagedKvView view{k.data(), v.data(), kBlockSize, num_kv_heads, head_dim, dtype};
  const AttentionQueries queries{q.data(),   stride,       out.data(),
                                 stride,     num_queries,  num_heads,
                                 context - num_queries, table, 1.0f / std::sqrt(float(head_dim))};
  const int32_t tile = tiled ? kMaxPagedAttentionQueryTile : 1;
  const int64_t num_tiles = (num_queries + tile - 1) / tile;
  for (auto _ : state) {
    Pool().ParallelFor(num_tiles * num_kv_heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int32_t first = static_cast<int32_t>(item / num_kv_heads) * tile;
        const int32_t kv_head = static_cast<int32_t>(item % num_kv_heads);
        if (tiled) {
          PagedAttentionQueries(view, queries, first, std::min(num_queries, first + tile), kv_head);
        } else {
          PagedAttention(view, queries, first, kv_head);
        }
      }
    });
    benchmark::DoNotOptimize(out.data());
  }
  const double pairs = (double(context) - num_queries) * num_queries +
                       double(num_queries) * (num_queries + 1) / 2;
  state.counters["pairs/s"] =
      benchmark::Counter(pairs * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(
      pairs * num_heads * head_dim * 4e-9 * state.iterations(), benchmark::Counter::kIsRate);
  // Of the f32 FMA peak of all pool threads that BM_Limits measures in this binary (the
  // kernel's products are f32 FMAs).
  state.counters["%f32_peak"] = benchmark::Counter(
      pairs * num_heads * head_dim * 4e-7 * state.iterations() / Limits(Pool()).f32_fma_gflops,
      benchmark::Counter::kIsRate);
  state.SetLabel(std::string(KvDTypeName(dtype)) + "/" + SimdLevelName(ActiveSimdLevel()) +
                 (tiled ? "/tiled" : "/per-query"));
}

void PrefillShapes(benchmark::internal::Benchmark* b) {
  for (int64_t dtype = 0; dtype < 5; ++dtype) {
    for (int64_t tiled : {0, 1}) {
      for (int64_t context : {1024, 2048}) b->Args({dtype, context, 256, 12, 12, 64, tiled});
      b->Args({dtype, 2048, 256, 32, 8, 128, tiled});  // GQA 4, head_dim 128
    }
    // Long contexts, tiled only (the per-query pattern would take seconds per iteration).
    for (int64_t context : {4096, 16384}) b->Args({dtype, context, 256, 12, 12, 64, 1});
  }
}
BENCHMARK(BM_PagedPrefill)
    ->Apply(PrefillShapes)
    ->ArgNames({"dtype", "ctx", "queries", "heads", "kv_heads", "dim", "tiled"})
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace surge
