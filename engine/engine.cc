#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <utility>

#include "base/logging.h"
#include "base/phase_profile.h"
#include "model/model_dims.h"

namespace surge {
namespace {

std::vector<int32_t> EosTokenIds(const Tokenizer& tokenizer, const ModelConfig& config) {
  std::vector<int32_t> ids = tokenizer.eos_token_ids();
  for (int32_t id : config.eos_token_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

}  // namespace

StatusOr<std::unique_ptr<Engine>> Engine::Create(ModelExecutor& model, const Tokenizer& tokenizer,
                                                 const EngineOptions& options) {
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(const int32_t num_blocks, NumKvBlocks(options, model));
  return std::unique_ptr<Engine>(
      new Engine(model, tokenizer, options, num_blocks));
}

Engine::Engine(ModelExecutor& model, const Tokenizer& tokenizer, const EngineOptions& options,
               int32_t num_kv_blocks)
    : model_(model),
      tokenizer_(tokenizer),
      options_(options),
      num_kv_blocks_(num_kv_blocks),
      kv_bytes_per_block_(static_cast<int64_t>(model.kv_layout(options.block_size, options.kv_dtype).bytes_per_block())),
      validation_{.vocab_size = static_cast<int32_t>(model.config().vocab_size),
                  .max_context = model.config().max_position_embeddings,
                  .is_encoder = model.config().is_encoder,
                  .max_num_seqs = options.max_num_seqs,
                  .max_num_batched_tokens = options.max_num_batched_tokens,
                  .block_size = options.block_size,
                  .num_kv_blocks = num_kv_blocks},
      eos_token_ids_(EosTokenIds(tokenizer, model.config())),
      masker_(tokenizer, eos_token_ids_),
      kv_(model.kv_layout(options.block_size, options.kv_dtype), num_kv_blocks,
          PrefixCacheOptions{options.enable_prefix_caching, options.prefix_cache_ttl_s, kDefaultBlockHashSeed,
                             options.clock, /*record_events=*/options.enable_prefix_caching}),
      scheduler_({.max_num_seqs = options.max_num_seqs,
                  .max_num_batched_tokens = options.max_num_batched_tokens,
                  .max_prefill_tokens_with_decodes = options.max_prefill_tokens_with_decodes,
                  .prefill_attention_crossover = AttentionCostCrossover(model.config()),
                  .whole_prompts_only = model.config().is_encoder},
                 kv_,
                 MakeSchedulingPolicy(options.scheduling_policy, options.priority_aging_s)),
      runner_(model, model.kv_layout(options.block_size, options.kv_dtype), num_kv_blocks),
      spec_decoder_({options.proposer, options.num_speculative_tokens, options.speculative_max_decodes},
                    static_cast<int32_t>(model.config().hidden_size)),
      output_(scheduler_, masker_, spec_decoder_, validation_.vocab_size),
      queue_(options.max_waiting) {
  runner_.set_hidden_of_token_rows(options.proposer != nullptr && options.proposer->wants_target_hidden());
  queue_.PublishStats(CurrentStats(/*ready=*/false));
}

Engine::~Engine() { Stop(); }

void Engine::Start() {
  CHECK(!thread_.joinable() && !stopped_) << "Engine::Start called twice";
  queue_.PublishStats(CurrentStats(/*ready=*/true));
  thread_ = std::thread(&Engine::Loop, this);
}

void Engine::Stop() {
  if (stopped_.exchange(true)) return;
  queue_.Close();
  if (thread_.joinable()) thread_.join();
  // The engine thread is gone (or never ran): this thread owns its state now.
  queue_.Take(/*wait=*/false, new_requests_, cancels_);
  for (auto& request : new_requests_) requests_.emplace(request->id(), std::move(request));
  FailAll(UnavailableError("the engine stopped"));
  queue_.PublishStats(CurrentStats(/*ready=*/false));
}

// --- Client threads ---

StatusOr<std::shared_ptr<RequestStream>> Engine::Submit(EngineRequest request,
                                                        std::function<void()> notify) {
  RETURN_IF_ERROR(ValidateRequest(request, validation_));
  const RequestId id{next_request_id_.fetch_add(1)};
  const SequenceId first_sequence_id = next_sequence_id_.fetch_add(request.n);
  if (!request.sampling.seed && options_.seed) request.sampling.seed = *options_.seed + static_cast<uint64_t>(id);
  std::vector<int32_t> stop_ids = request.stop.stop_token_ids;
  if (!request.stop.ignore_eos) {
    stop_ids.insert(stop_ids.end(), eos_token_ids_.begin(), eos_token_ids_.end());
  }
  auto channel = std::make_shared<RequestChannel>(id, std::move(notify));
  // Built here, off the engine thread: priming the detokenizers costs a few decodes.
  auto state = std::make_unique<RequestState>(id, std::move(request), std::move(stop_ids),
                                              first_sequence_id, tokenizer_, masker_.vocabulary(),
                                              channel, static_cast<int32_t>(model_.config().hidden_size));
  state->SetArrivalTime(Now());
  RETURN_IF_ERROR(queue_.Push(std::move(state)));
  return std::shared_ptr<RequestStream>(std::move(channel));
}

void Engine::Cancel(RequestId id) { queue_.Cancel(id); }

EngineStats Engine::Stats() const { return queue_.stats(); }

KvCacheInfo Engine::KvCache() const {
  return {kv_.prefix_caching(), options_.block_size, kDefaultBlockHashSeed, num_kv_blocks_};
}

StatusOr<std::unique_ptr<KvEventSubscription>> Engine::SubscribeKvEvents(std::function<void()> notify) {
  if (!kv_.prefix_caching()) return UnimplementedError("prefix caching is off: there are no KV events");
  return kv_events_.Subscribe(std::move(notify));
}

// --- The engine thread ---

void Engine::Loop() {
  while (TakeInputs()) {
    ExpireDeadlines();
    if (scheduler_.HasWork()) Step();
    kv_events_.Feed(kv_);  // before the outputs: see kv_event_feed.h
    PhaseSpan publish(Phase::kPublish);
    Publish();
  }
}

// New requests join the waiting queue; cancelled ones give back their blocks at once.
// Sleeps while there is nothing to do. False when the engine is stopping.
bool Engine::TakeInputs() {
  const bool idle = !scheduler_.HasWork() && touched_.empty();
  const bool running = queue_.Take(/*wait=*/idle, new_requests_, cancels_);
  for (auto& request : new_requests_) {
    scheduler_.AddWaiting(&request->choice(0).seq);
    if (const double timeout_s = request->request().timeout_s; timeout_s > 0) {
      deadlines_.Add(request->arrival_time_s() + timeout_s, request->id());
    }
    requests_.emplace(request->id(), std::move(request));
  }
  if (!running) return false;  // Stop fails what is left, these included
  for (RequestId id : cancels_) {
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;  // unknown or already finished
    RequestState& request = *it->second;
    request.Abort();
    FinishChoices(request);
    touched_.Add(request);
  }
  return true;
}

// A request past its deadline ends now, waiting or running, as a cancel would, but with
// an error that says why; its blocks are free for this very step.
void Engine::ExpireDeadlines() {
  if (deadlines_.empty()) return;
  due_.clear();
  deadlines_.TakeDue(Now(), requests_.size(), [this](RequestId id) { return requests_.contains(id); }, due_);
  for (RequestId id : due_) {
    auto it = requests_.find(id);
    if (it == requests_.end() || it->second->finished()) continue;
    RequestState& request = *it->second;
    FinishChoices(request);
    std::ostringstream message;
    message << "the request's deadline passed (" << request.request().timeout_s << " s after it was submitted)";
    request.Fail(Status(StatusCode::kDeadlineExceeded, message.str()));
    touched_.Add(request);
  }
}

// Propose drafts, schedule, run one pass, hand its output to the output stage, update.
void Engine::Step() {
  PhaseMarks marks;
  spec_decoder_.Propose(scheduler_.running());
  const SchedulerOutput& plan = scheduler_.Schedule();
  marks.Mark(Phase::kScheduling);
  results_.assign(plan.chunks.size(), ChunkResult{});
  if (plan.chunks.empty()) {  // only right after a preemption, which frees blocks
    scheduler_.Update(plan, results_);
    return;
  }
  MarkScheduled(plan);
  step_sequences_.Observe(static_cast<int64_t>(plan.chunks.size()));
  step_tokens_.Observe(plan.num_batched_tokens);
  const auto start = std::chrono::steady_clock::now();
  std::span<const float> logits = runner_.Run(plan, kv_);
  marks = PhaseMarks();  // the runner marks its own phases
  output_.Process(plan, logits, runner_, results_, touched_);
  marks.Mark(Phase::kSampling);
  scheduler_.Update(plan, results_);
  marks.Mark(Phase::kScheduling);
  busy_us_ += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  ++num_steps_;
  if (options_.check_invariants) {
    const Status status = scheduler_.CheckInvariants();
    CHECK(status.ok()) << "after step " << num_steps_ << ": " << status.ToString();
  }
}

void Engine::FinishChoices(RequestState& request) {
  for (int32_t i = 0; i < request.num_choices(); ++i) scheduler_.Finish(request.choice(i).seq);
}

double Engine::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A request's queue time ends when its first chunk is scheduled.
void Engine::MarkScheduled(const SchedulerOutput& plan) {
  double now = -1;
  for (const ScheduledChunk& chunk : plan.chunks) {
    RequestState& request = *chunk.seq->request;
    if (request.scheduled()) continue;
    if (now < 0) now = Now();
    request.SetScheduledTime(now);
  }
}

// Stats first, so that whoever sees a stream end also sees the blocks it freed.
void Engine::Publish() {
  queue_.PublishStats(CurrentStats(/*ready=*/true));
  for (RequestState* request : touched_.requests()) {
    request->touched = false;
    if (std::optional<RequestOutput> output = request->TakeOutput()) {
      request->channel().Push(std::move(*output));
    }
    if (request->finished()) requests_.erase(request->id());
  }
  touched_.Clear();
}

void Engine::FailAll(const Status& error) {
  for (auto& [id, request] : requests_) {
    FinishChoices(*request);
    request->Fail(error);
    if (std::optional<RequestOutput> output = request->TakeOutput()) {
      request->channel().Push(std::move(*output));
    }
  }
  requests_.clear();
  touched_.Clear();
}

}  // namespace surge
