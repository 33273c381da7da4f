// Engine: the continuous-batching engine loop behind EngineClient. One thread owns the
// scheduler, the KV cache and the model; each step it takes new requests and
// cancellations, schedules, runs one forward pass over all scheduled chunks, samples,
// applies the stop rules and publishes every request's news to its stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "engine/constraint_masker.h"
#include "engine/engine_client.h"
#include "engine/kv_event_hub.h"
#include "engine/model_runner.h"
#include "engine/request_queue.h"
#include "engine/request_state.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/scheduling_policy.h"
#include "engine/speculative.h"
#include "kv/kv_cache_manager.h"
#include "model/executor.h"
#include "tokenizer/tokenizer.h"

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
  // Speculative decoding (engine/speculative.h); no proposer: off. Each decoding sequence
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
};

class Engine final : public EngineClient {
 public:
  // `model` and `tokenizer` are borrowed and must outlive the engine. Errors: options out
  // of range, or a KV budget smaller than one block. Requests too large for the pool are
  // refused one by one at Submit.
  static StatusOr<std::unique_ptr<Engine>> Create(ModelExecutor& model, const Tokenizer& tokenizer,
                                                  const EngineOptions& options);
  ~Engine() override;  // Stop()

  // Starts the engine thread. Requests submitted before Start wait for it.
  void Start();
  // Stops and joins the engine thread; requests still in flight end with Unavailable.
  // Idempotent. Not from a notify callback: that runs on the engine thread.
  void Stop();

  StatusOr<std::shared_ptr<RequestStream>> Submit(EngineRequest request,
                                                  std::function<void()> notify) override;
  void Cancel(RequestId id) override;
  EngineStats Stats() const override;
  KvCacheInfo KvCache() const override;
  StatusOr<std::unique_ptr<KvEventSubscription>> SubscribeKvEvents(std::function<void()> notify) override;

  int32_t num_kv_blocks() const { return num_kv_blocks_; }

 private:
  Engine(ModelExecutor& model, const Tokenizer& tokenizer, const EngineOptions& options,
         int32_t num_kv_blocks);
  Status Validate(const EngineRequest& request) const;
  Status ValidateEmbedding(const EngineRequest& request) const;

  // The engine thread.
  void Loop();
  bool TakeInputs();
  void ExpireDeadlines();
  void Step();
  void Postprocess(const SchedulerOutput& plan, std::span<const float> logits);
  void PoolChunk(const ScheduledChunk& chunk, std::span<const float> rows, ChunkResult& result);
  void ScorePrompt(const ScheduledChunk& chunk, std::span<const float> rows);
  void FinishAllChoices(RequestState& request, FinishReason reason);
  void Propose();
  void ShowProposerHidden(const SchedulerOutput& plan);
  void SampleNext(RequestState& request, Choice& choice, std::span<const float> logits, ChunkResult& result);
  void VerifyDrafts(RequestState& request, Choice& choice, std::span<const float> rows,
                    const ScheduledChunk& chunk, ChunkResult& result);
  void SampleFirstTokensAndFork(RequestState& request, std::span<const float> logits, ChunkResult& result);
  bool TakeToken(RequestState& request, Choice& choice, std::span<const float> logits);
  std::span<const float> Constrain(RequestState& request, const Choice& choice, std::span<const float> logits);
  int32_t Sample(SequenceSampler& sampler, std::span<const float> logits);
  const TokenLogProbs* LogProbs(const RequestState& request, std::span<const float> logits,
                                int32_t token);
  void Touch(RequestState& request);
  void MarkScheduled(const SchedulerOutput& plan);
  double Now() const;
  void Publish();
  void PublishKvEvents();
  EngineStats CurrentStats(bool ready) const;
  void FailAll(const Status& error);

  ModelExecutor& model_;
  const Tokenizer& tokenizer_;
  const EngineOptions options_;
  const int32_t num_kv_blocks_;
  const int64_t kv_bytes_per_block_;  // the KV layout's, scales and padding included
  const int32_t vocab_size_;
  std::vector<int32_t> eos_token_ids_;  // tokenizer's ∪ model config's
  // Token masks for constrained requests. Its vocabulary is immutable (client threads read
  // it in Submit); its mask caches are engine-thread state.
  ConstraintMasker masker_;

  // Engine-thread state.
  KvCacheManager kv_;
  Scheduler scheduler_;
  ModelRunner runner_;
  std::unordered_map<RequestId, std::unique_ptr<RequestState>> requests_;
  std::vector<std::unique_ptr<RequestState>> new_requests_;  // reused by TakeInputs
  std::vector<RequestId> cancels_;                           // reused by TakeInputs
  std::vector<RequestState*> touched_;  // requests with news for the next Publish
  std::vector<Sequence*> children_;     // reused by SampleFirstTokensAndFork
  std::vector<ChunkResult> results_;    // [plan chunks]: Postprocess's, for Scheduler::Update
  std::vector<ProposalRequest> proposals_;  // reused by Propose
  std::vector<float> sample_logits_;    // [vocab_size]: a row for the sampler to edit
  std::vector<float> masked_logits_;    // [vocab_size]: a constrained choice's masked row (with logprobs)
  SamplerScratch sampler_scratch_;
  TokenLogProbs logprobs_;
  int64_t num_steps_ = 0;
  int64_t busy_us_ = 0;  // wall time inside Step's forward and postprocess (the busy fraction)
  int64_t num_prompt_tokens_computed_ = 0;
  int64_t num_generation_tokens_ = 0;
  StepSizeHistogram step_sequences_;  // per step: chunks in the plan
  StepSizeHistogram step_tokens_;     // per step: the plan's batched tokens
  int64_t spec_num_drafts_ = 0;
  int64_t spec_num_draft_tokens_ = 0;
  int64_t spec_num_accepted_tokens_ = 0;
  std::vector<int64_t> spec_accepted_per_pos_;  // [num_speculative_tokens]
  // Requests with a deadline (EngineRequest::timeout_s): (deadline in Now() seconds, id)
  // as a min-heap, so that a step with nothing due costs one comparison. Entries of
  // requests that finished first are dropped at the top or swept (ExpireDeadlines).
  std::vector<std::pair<double, RequestId>> deadlines_;

  // Shared with client threads.
  RequestQueue queue_;
  std::atomic<RequestId> next_request_id_{1};
  std::atomic<SequenceId> next_sequence_id_{0};
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  KvEventHub kv_events_;  // the prefix cache's changes, fed after every step
  std::vector<PrefixCacheEvent> kv_changes_;  // engine thread: reused by PublishKvEvents
};

}  // namespace surge
