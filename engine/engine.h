// Engine: the continuous-batching engine loop behind EngineClient. One thread owns the
// scheduler, the KV cache and the model; each step it takes new requests and
// cancellations, schedules, runs one forward pass over all scheduled chunks, hands the
// logits to the output stage (output_processor.h: sampling, stop rules, speculative
// verification, pooling) and publishes every request's news to its stream. Requests are
// validated on the client thread that submits them (request_validation.h).
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
#include "engine/engine_options.h"
#include "engine/kv_event_feed.h"
#include "engine/model_runner.h"
#include "engine/output_processor.h"
#include "engine/request_deadlines.h"
#include "engine/request_queue.h"
#include "engine/request_state.h"
#include "engine/request_validation.h"
#include "engine/scheduler.h"
#include "engine/spec_decode/spec_decoder.h"
#include "kv/kv_cache_manager.h"
#include "model/executor.h"
#include "tokenizer/tokenizer.h"

namespace surge {

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

  // The engine thread: the loop, and each step's parts.
  void Loop();
  bool TakeInputs();
  void ExpireDeadlines();
  void Step();
  void FinishChoices(RequestState& request);
  void MarkScheduled(const SchedulerOutput& plan);
  double Now() const;
  void Publish();
  EngineStats CurrentStats(bool ready) const;
  void FailAll(const Status& error);

  ModelExecutor& model_;
  const Tokenizer& tokenizer_;
  const EngineOptions options_;
  const int32_t num_kv_blocks_;
  const int64_t kv_bytes_per_block_;  // the KV layout's, scales and padding included
  const RequestValidationContext validation_;  // read by client threads in Submit
  std::vector<int32_t> eos_token_ids_;  // tokenizer's ∪ model config's
  // Token masks for constrained requests. Its vocabulary is immutable (client threads read
  // it in Submit); its mask caches are engine-thread state.
  ConstraintMasker masker_;

  // Engine-thread state.
  KvCacheManager kv_;
  Scheduler scheduler_;
  ModelRunner runner_;
  SpecDecoder spec_decoder_;
  OutputProcessor output_;
  std::unordered_map<RequestId, std::unique_ptr<RequestState>> requests_;
  std::vector<std::unique_ptr<RequestState>> new_requests_;  // reused by TakeInputs
  std::vector<RequestId> cancels_;                           // reused by TakeInputs
  std::vector<RequestId> due_;                               // reused by ExpireDeadlines
  TouchedRequests touched_;             // requests with news for the next Publish
  std::vector<ChunkResult> results_;    // [plan chunks]: the output stage's, for Scheduler::Update
  RequestDeadlines deadlines_;          // requests with a timeout_s
  int64_t num_steps_ = 0;
  int64_t busy_us_ = 0;  // wall time inside Step's forward and postprocess (the busy fraction)
  StepSizeHistogram step_sequences_;  // per step: chunks in the plan
  StepSizeHistogram step_tokens_;     // per step: the plan's batched tokens

  // Shared with client threads.
  RequestQueue queue_;
  std::atomic<uint64_t> next_request_id_{1};  // the next RequestId
  std::atomic<SequenceId> next_sequence_id_{0};
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  KvEventFeed kv_events_;  // the prefix cache's changes, fed after every step
};

}  // namespace surge
