// EngineOptions: how an Engine is built (engine.h) -- the KV cache, the scheduler's
// limits, prefix caching, sampling's default seed, speculative decoding -- and the one
// check of their ranges.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "base/status.h"
#include "engine/scheduling_policy.h"
#include "engine/spec_decode/proposer.h"
#include "kv/kv_layout.h"
#include "model/executor.h"

namespace surge {

struct EngineOptions {
  int32_t block_size = 16;                    // tokens per KV block
  int64_t kv_cache_bytes = int64_t{1} << 30;  // blocks = bytes / layout.bytes_per_block()
  KvDType kv_dtype = KvDType::kF32;           // format of the cached K/V rows
  int32_t max_num_seqs = 256;                 // running sequences at once
  int32_t max_num_batched_tokens = 2048;      // tokens per forward pass
  int32_t max_prefill_tokens_with_decodes = 0;  // SchedulerOptions' (0: off)
  int32_t max_waiting = 1024;                 // queued requests before Submit refuses
  bool check_invariants = false;              // tests: CHECK scheduler + KV invariants per step
  bool enable_prefix_caching = true;          // reuse the K/V of full blocks seen before
  // --seed: a request without a seed samples with seed + its request id, so that a run's
  // unseeded sampling repeats with the same requests in the same order; nullopt: random.
  std::optional<uint64_t> seed;
  double prefix_cache_ttl_s = 0;              // release cached blocks idle this long (0: never)
  SchedulingPolicyKind scheduling_policy = SchedulingPolicyKind::kFcfs;
  double priority_aging_s = 1.0;              // waiting seconds worth one priority level
  // Speculative decoding (engine/spec_decode/); no proposer: off. Each decoding sequence
  // proposes up to its own k (from num_speculative_tokens down to 1, following how many of
  // its drafts the target took: all of them, one more next time; else the taken ones + 1);
  // a step with more decoding sequences than speculative_max_decodes proposes nothing,
  // because there the pass is compute-bound and verifying guesses costs what they save
  // (docs/BENCH.md, speculative decoding).
  std::shared_ptr<Proposer> proposer;
  int32_t num_speculative_tokens = 4;
  int32_t speculative_max_decodes = 4;
  // Monotonic seconds for arrival times, queue times and the cache TTL; steady_clock when
  // empty (tests inject their own).
  std::function<double()> clock;

  // InvalidArgument naming the first option out of range.
  Status Validate() const;
};

// The KV cache's size in blocks: kv_cache_bytes over the bytes of one block of `model`'s
// layout in kv_dtype. InvalidArgument when the budget is smaller than one block.
StatusOr<int32_t> NumKvBlocks(const EngineOptions& options, const ModelExecutor& model);

}  // namespace surge
