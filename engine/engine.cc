#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "base/logging.h"
#include "base/phase_profile.h"
#include "engine/request_limits.h"
#include "model/model_dims.h"

namespace surge {
namespace {

Status ValidateOptions(const EngineOptions& options) {
  if (options.block_size <= 0) return InvalidArgumentError("block_size must be > 0");
  if (options.max_num_seqs <= 0) return InvalidArgumentError("max_num_seqs must be > 0");
  if (options.max_num_batched_tokens <= 0) {
    return InvalidArgumentError("max_num_batched_tokens must be > 0");
  }
  if (options.max_waiting <= 0) return InvalidArgumentError("max_waiting must be > 0");
  if (options.max_prefill_tokens_with_decodes < 0) {
    return InvalidArgumentError("max_prefill_tokens_with_decodes must be >= 0");
  }
  if (!(options.prefix_cache_ttl_s >= 0)) return InvalidArgumentError("prefix_cache_ttl_s must be >= 0");
  if (!(options.priority_aging_s > 0)) return InvalidArgumentError("priority_aging_s must be > 0");
  if (options.proposer != nullptr) {
    if (options.num_speculative_tokens < 1 || options.num_speculative_tokens > kMaxSpeculativeTokens) {
      return InvalidArgumentError("num_speculative_tokens must be in [1, " +
                                  std::to_string(kMaxSpeculativeTokens) + "]");
    }
    if (options.speculative_max_decodes < 1) {
      return InvalidArgumentError("speculative_max_decodes must be >= 1");
    }
  }
  return OkStatus();
}

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
  RETURN_IF_ERROR(ValidateOptions(options));
  const KvLayout layout = model.kv_layout(options.block_size, options.kv_dtype);
  const int64_t bytes_per_block = static_cast<int64_t>(layout.bytes_per_block());
  const int64_t num_blocks = std::min<int64_t>(options.kv_cache_bytes / bytes_per_block,
                                               std::numeric_limits<int32_t>::max());
  if (num_blocks < 1) {
    return InvalidArgumentError("kv_cache_bytes (" + std::to_string(options.kv_cache_bytes) +
                                ") is smaller than one KV block (" +
                                std::to_string(bytes_per_block) + " bytes)");
  }
  LOG(INFO) << "KV cache: " << KvDTypeName(layout.dtype) << ", " << num_blocks << " blocks of "
            << options.block_size << " tokens, " << layout.bytes_per_token() << " bytes per token, "
            << num_blocks * options.block_size << " tokens fit ("
            << num_blocks * bytes_per_block / (1 << 20) << " MiB); prefix caching "
            << (options.enable_prefix_caching ? "on" : "off");
  if (layout.latent) {  // what MLA saves: per-head K and V would take this much
    const MlaConfig& mla = *model.config().mla;
    const int64_t mha_row_values = model.config().num_heads * (mla.q_head_dim() + mla.v_head_dim);
    LOG(INFO) << "KV cache: MLA latent of " << layout.head_dim << " values per token and layer;"
              << " per-head K/V would take " << mha_row_values << " ("
              << std::setprecision(3) << static_cast<double>(mha_row_values) / layout.head_dim
              << "x)";
  }
  return std::unique_ptr<Engine>(
      new Engine(model, tokenizer, options, static_cast<int32_t>(num_blocks)));
}

Engine::Engine(ModelExecutor& model, const Tokenizer& tokenizer, const EngineOptions& options,
               int32_t num_kv_blocks)
    : model_(model),
      tokenizer_(tokenizer),
      options_(options),
      num_kv_blocks_(num_kv_blocks),
      kv_bytes_per_block_(static_cast<int64_t>(model.kv_layout(options.block_size, options.kv_dtype).bytes_per_block())),
      vocab_size_(static_cast<int32_t>(model.config().vocab_size)),
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
      sample_logits_(vocab_size_),
      masked_logits_(vocab_size_),
      spec_accepted_per_pos_(options.proposer ? options.num_speculative_tokens : 0),
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

Status Engine::Validate(const EngineRequest& request) const {
  const int64_t num_prompt = static_cast<int64_t>(request.prompt_ids.size());
  if (num_prompt == 0) return InvalidArgumentError("the prompt has no tokens");
  for (int32_t id : request.prompt_ids) {
    if (id < 0 || id >= vocab_size_) {
      return InvalidArgumentError("token id " + std::to_string(id) +
                                  " is outside the vocabulary [0, " + std::to_string(vocab_size_) +
                                  ")");
    }
  }
  if (request.embed) return ValidateEmbedding(request);
  if (model_.config().is_encoder) {
    return InvalidArgumentError("this model is a sentence encoder: it computes embeddings only, it cannot generate");
  }
  // n, max_tokens, logprobs and the sampling parameters (engine/request_limits.h).
  RETURN_IF_ERROR(CheckRequestLimits(request, {vocab_size_, options_.max_num_seqs}));
  for (const std::string& stop : request.stop.stop) {
    if (stop.empty()) return InvalidArgumentError("stop strings must not be empty");
  }
  RETURN_IF_ERROR(request.sampling.Validate());  // logit_bias: what the table does not cover
  const int64_t num_total = num_prompt + request.stop.max_tokens;
  const int64_t max_context = model_.config().max_position_embeddings;
  const std::string what = "prompt (" + std::to_string(num_prompt) + " tokens) + max_tokens (" +
                           std::to_string(request.stop.max_tokens) + ")";
  if (num_total > max_context) {
    return InvalidArgumentError(what + " exceeds the model's context of " +
                                std::to_string(max_context) + " tokens");
  }
  // The last sampled token is never fed back, so a choice holds num_total - 1 positions.
  const int32_t num_blocks = kv_.NumBlocksFor(num_total - 1);
  if (num_blocks > num_kv_blocks_) {
    return InvalidArgumentError(what + " needs " + std::to_string(num_blocks) +
                                " KV blocks, more than the whole KV cache (" +
                                std::to_string(num_kv_blocks_) + " blocks of " +
                                std::to_string(options_.block_size) + " tokens)");
  }
  return OkStatus();
}

// An embedding request samples nothing: what only sampling reads is refused, not ignored.
Status Engine::ValidateEmbedding(const EngineRequest& request) const {
  if (request.n != 1) return InvalidArgumentError("an embedding request has n = 1");
  if (request.top_logprobs != -1 || request.prompt_logprobs != -1 || request.constraint) {
    return InvalidArgumentError("an embedding request takes no logprobs or output constraint");
  }
  const int64_t num_prompt = static_cast<int64_t>(request.prompt_ids.size());
  const int64_t max_context = model_.config().max_position_embeddings;
  const std::string what = "input (" + std::to_string(num_prompt) + " tokens)";
  if (num_prompt > max_context) {
    return InvalidArgumentError(what + " exceeds the model's context of " +
                                std::to_string(max_context) + " tokens");
  }
  if (model_.config().is_encoder && num_prompt > options_.max_num_batched_tokens) {
    return InvalidArgumentError(what + " exceeds max_num_batched_tokens (" +
                                std::to_string(options_.max_num_batched_tokens) +
                                "): an encoder runs each input whole in one pass");
  }
  if (kv_.NumBlocksFor(num_prompt) > num_kv_blocks_) {
    return InvalidArgumentError(what + " needs more KV blocks than the whole KV cache (" +
                                std::to_string(num_kv_blocks_) + " blocks of " +
                                std::to_string(options_.block_size) + " tokens)");
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<RequestStream>> Engine::Submit(EngineRequest request,
                                                        std::function<void()> notify) {
  RETURN_IF_ERROR(Validate(request));
  const RequestId id = next_request_id_.fetch_add(1);
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
    PublishKvEvents();
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
      deadlines_.emplace_back(request->arrival_time_s() + timeout_s, request->id());
      std::push_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
    }
    requests_.emplace(request->id(), std::move(request));
  }
  if (!running) return false;  // Stop fails what is left, these included
  for (RequestId id : cancels_) {
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;  // unknown or already finished
    RequestState& request = *it->second;
    request.Abort();
    for (int32_t i = 0; i < request.num_choices(); ++i) scheduler_.Finish(request.choice(i).seq);
    Touch(request);
  }
  return true;
}

// A request past its deadline ends now, waiting or running, as a cancel would, but with
// an error that says why; its blocks are free for this very step.
void Engine::ExpireDeadlines() {
  if (deadlines_.empty()) return;
  // Entries of requests that finished first wait for their time; past twice the live
  // requests they are swept (amortized O(1) per request), so long timeouts never pile up.
  if (deadlines_.size() > 2 * requests_.size() + 64) {
    std::erase_if(deadlines_, [this](const auto& entry) { return !requests_.contains(entry.second); });
    std::make_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
  }
  const double now = Now();
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    const RequestId id = deadlines_.front().second;
    std::pop_heap(deadlines_.begin(), deadlines_.end(), std::greater<>());
    deadlines_.pop_back();
    auto it = requests_.find(id);
    if (it == requests_.end() || it->second->finished()) continue;
    RequestState& request = *it->second;
    for (int32_t i = 0; i < request.num_choices(); ++i) scheduler_.Finish(request.choice(i).seq);
    std::ostringstream message;
    message << "the request's deadline passed (" << request.request().timeout_s << " s after it was submitted)";
    request.Fail(Status(StatusCode::kDeadlineExceeded, message.str()));
    Touch(request);
  }
}

void Engine::Step() {
  PhaseMarks marks;
  Propose();
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
  Postprocess(plan, logits);
  marks.Mark(Phase::kSampling);
  ShowProposerHidden(plan);
  scheduler_.Update(plan, results_);
  marks.Mark(Phase::kScheduling);
  busy_us_ += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  ++num_steps_;
  if (options_.check_invariants) {
    const Status status = scheduler_.CheckInvariants();
    CHECK(status.ok()) << "after step " << num_steps_ << ": " << status.ToString();
  }
}

// Asks the proposer for every decoding sequence's guesses, each up to its own k and never
// past its max_tokens (the token after the last draft is the target's own). A step with
// more decodes than speculative_max_decodes proposes nothing.
void Engine::Propose() {
  if (options_.proposer == nullptr) return;
  std::span<Sequence* const> running = scheduler_.running();
  const auto num_decodes = std::count_if(running.begin(), running.end(),
                                         [](const Sequence* seq) { return seq->num_pending_tokens() == 1; });
  const bool speculate = num_decodes <= options_.speculative_max_decodes;
  proposals_.clear();
  for (Sequence* seq : running) {
    int32_t max_tokens = 0;
    if (speculate && seq->num_pending_tokens() == 1 && seq->output == SequenceOutput::kTokens) {
      if (seq->num_speculative_tokens == 0) seq->num_speculative_tokens = options_.num_speculative_tokens;
      const int32_t num_left = seq->request->request().stop.max_tokens - seq->num_output_tokens();
      max_tokens = std::clamp(num_left - 1, 0, seq->num_speculative_tokens);
    }
    proposals_.push_back({seq, max_tokens});
  }
  options_.proposer->Propose(proposals_);
  for (const ProposalRequest& proposal : proposals_) {
    CHECK_LE(static_cast<int32_t>(proposal.seq->draft_token_ids.size()), proposal.max_tokens)
        << SpeculativeMethodName(options_.proposer->method()) << " proposed past its limit";
  }
}

// An MTP proposer reads the target's hidden state of every position a sequence keeps:
// each chunk's known rows and its accepted drafts (a rejected draft's row is not the
// sequence's).
void Engine::ShowProposerHidden(const SchedulerOutput& plan) {
  if (options_.proposer == nullptr || !options_.proposer->wants_target_hidden()) return;
  const size_t hidden_size = static_cast<size_t>(model_.config().hidden_size);
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    if (chunk.seq->output != SequenceOutput::kTokens) continue;
    const int32_t num_kept = chunk.num_tokens - chunk.num_draft_tokens + results_[i].num_accepted_drafts;
    options_.proposer->ObserveTargetHidden(*chunk.seq, chunk.start_position,
                                           runner_.chunk_hidden(i).first(static_cast<size_t>(num_kept) * hidden_size));
  }
}

void Engine::Postprocess(const SchedulerOutput& plan, std::span<const float> logits) {
  size_t row = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    ChunkResult& result = results_[i];
    Sequence& seq = *chunk.seq;
    const int32_t num_known = chunk.num_tokens - chunk.num_draft_tokens;
    const bool decode = num_known == 1 && chunk.start_position >= seq.num_prompt_tokens;
    num_prompt_tokens_computed_ += num_known - (decode ? 1 : 0);
    if (seq.output == SequenceOutput::kLastHidden || seq.output == SequenceOutput::kAllHidden) {
      PoolChunk(chunk, runner_.chunk_hidden(i), result);
      continue;
    }
    const int32_t num_scoring_rows = ModelRunner::NumPromptLogitsRows(chunk);
    if (num_scoring_rows > 0) {
      ScorePrompt(chunk, logits.subspan(row * vocab_size_, static_cast<size_t>(num_scoring_rows) * vocab_size_));
      row += num_scoring_rows;
    }
    if (!chunk.sample) continue;
    const size_t num_rows = 1 + static_cast<size_t>(chunk.num_draft_tokens);
    std::span<const float> rows = logits.subspan(row * vocab_size_, num_rows * vocab_size_);
    row += num_rows;
    RequestState& request = *seq.request;
    if (request.request().stop.max_tokens == 0) {  // the prompt scored, nothing to generate
      FinishAllChoices(request, FinishReason::kLength);
      continue;
    }
    if (!request.forked()) {
      SampleFirstTokensAndFork(request, rows, result);
    } else if (chunk.num_draft_tokens > 0) {
      VerifyDrafts(request, request.choice(seq.choice_index), rows, chunk, result);
    } else {
      SampleNext(request, request.choice(seq.choice_index), rows, result);
    }
    Touch(request);
  }
}

// A decode with drafts d_1..d_k has logits rows 0..k: row i scores the token after d_i
// (row 0: after the sequence's own last token). Each row is sampled or verified exactly
// as a decode step would be -- constraint mask, penalties and sampler state as of the
// tokens taken so far -- until a draft is rejected (the target's own token replaces it)
// or the sequence finishes; when every draft is taken, the last row gives one more token.
// result.num_accepted_drafts: the drafts taken (their K/V, computed by this pass, is kept).
void Engine::VerifyDrafts(RequestState& request, Choice& choice, std::span<const float> rows,
                          const ScheduledChunk& chunk, ChunkResult& result) {
  const std::vector<int32_t>& drafts = chunk.seq->draft_token_ids;
  const int32_t num_drafts = chunk.num_draft_tokens;
  int32_t num_accepted = 0;
  for (int32_t i = 0; i <= num_drafts; ++i) {
    std::span<const float> row = Constrain(request, choice, rows.subspan(static_cast<size_t>(i) * vocab_size_, vocab_size_));
    int32_t token;
    bool accepted = false;
    if (i < num_drafts) {
      if (row.data() != sample_logits_.data()) std::copy(row.begin(), row.end(), sample_logits_.begin());
      ++num_generation_tokens_;
      const SequenceSampler::Verdict verdict = choice.sampler.Verify(sample_logits_, drafts[i], sampler_scratch_);
      token = verdict.token;
      accepted = verdict.accepted;
    } else {
      token = Sample(choice.sampler, row);
    }
    if (accepted) {
      ++num_accepted;
      ++spec_accepted_per_pos_[i];
    }
    if (request.AppendToken(choice, token, LogProbs(request, row, token))) {
      result.finished = true;
      break;
    }
    if (!accepted) break;
  }
  ++spec_num_drafts_;
  spec_num_draft_tokens_ += num_drafts;
  spec_num_accepted_tokens_ += num_accepted;
  // The next proposal: one longer after a full acceptance, else what was taken plus one.
  Sequence& seq = choice.seq;
  seq.num_speculative_tokens = num_accepted == num_drafts
                                   ? std::min(seq.num_speculative_tokens + 1, options_.num_speculative_tokens)
                                   : std::max(num_accepted + 1, 1);
  result.num_accepted_drafts = num_accepted;
}

// Embeddings run as prefill-only sequences: each chunk's hidden rows are pooled, and the
// chunk that completes the prompt ends the request and frees its blocks at once. They
// bypass the prefix cache both ways: mean pooling needs every token's hidden state, which
// a cache hit would skip (the cache keeps K/V, not hidden states), and documents embedded
// once would only push the chat prefixes that are reused out of the cache's LRU.
void Engine::PoolChunk(const ScheduledChunk& chunk, std::span<const float> rows, ChunkResult& result) {
  RequestState& request = *chunk.seq->request;
  request.pooler()->Add(chunk.start_position, rows);
  if (!chunk.sample) return;
  request.FinishEmbedding();
  result.finished = true;
  Touch(request);
}

// Prompt logprobs (echo): row i of `rows` is the logits at position start + i, which score
// the prompt's token at start + i + 1, as the model saw it (no constraint, no penalties).
void Engine::ScorePrompt(const ScheduledChunk& chunk, std::span<const float> rows) {
  RequestState& request = *chunk.seq->request;
  const int32_t num_rows = static_cast<int32_t>(rows.size() / vocab_size_);
  for (int32_t i = 0; i < num_rows; ++i) {
    const int32_t position = chunk.start_position + i + 1;
    const int32_t token = chunk.seq->token_ids[position];
    ComputeLogProbs(rows.subspan(static_cast<size_t>(i) * vocab_size_, vocab_size_), token,
                    request.request().prompt_logprobs, &logprobs_);
    request.AddPromptLogprob(position, logprobs_);
  }
  Touch(request);
}

void Engine::FinishAllChoices(RequestState& request, FinishReason reason) {
  request.FinishAll(reason);
  for (int32_t i = 0; i < request.num_choices(); ++i) scheduler_.Finish(request.choice(i).seq);
  Touch(request);
}

void Engine::SampleNext(RequestState& request, Choice& choice, std::span<const float> logits,
                        ChunkResult& result) {
  result.finished = TakeToken(request, choice, logits);
}

// Samples `choice`'s next token and appends it; true when the choice has finished.
bool Engine::TakeToken(RequestState& request, Choice& choice, std::span<const float> logits) {
  std::span<const float> row = Constrain(request, choice, logits);
  const int32_t token = Sample(choice.sampler, row);
  return request.AppendToken(choice, token, LogProbs(request, row, token));
}

// The row a choice samples from: the model's logits or, under an active constraint, a copy
// with the disallowed tokens at -inf -- before logit bias, penalties, temperature and the
// truncations, so that no sampling rule can bring a disallowed token back. The mask reads
// only the choice's own matcher: batch neighbours never change it. Without logprobs the
// copy is the sampler's own row (one copy, not two); logprobs read the masked row after
// sampling, which edits its row, so then it has one of its own.
std::span<const float> Engine::Constrain(const RequestState& request, const Choice& choice,
                                         std::span<const float> logits) {
  if (!choice.constraint.active()) return logits;
  std::span<float> out = request.request().top_logprobs >= 0 ? std::span<float>(masked_logits_)
                                                             : std::span<float>(sample_logits_);
  masker_.Mask(choice.constraint.matcher(), logits, out);
  return out;
}

// n > 1: every choice samples its first token from choice 0's prompt logits with its own
// sampler; the unfinished ones then fork, sharing choice 0's full prompt blocks.
void Engine::SampleFirstTokensAndFork(RequestState& request, std::span<const float> logits,
                                      ChunkResult& result) {
  children_.clear();
  for (int32_t i = 1; i < request.num_choices(); ++i) {
    Choice& choice = request.choice(i);
    if (TakeToken(request, choice, logits)) {
      scheduler_.Finish(choice.seq);
    } else {
      children_.push_back(&choice.seq);
    }
  }
  Choice& parent = request.choice(0);
  const bool parent_finished = TakeToken(request, parent, logits);
  scheduler_.Fork(parent.seq, children_);
  request.set_forked();
  result.finished = parent_finished;
}

int32_t Engine::Sample(SequenceSampler& sampler, std::span<const float> logits) {
  if (logits.data() != sample_logits_.data()) std::copy(logits.begin(), logits.end(), sample_logits_.begin());
  ++num_generation_tokens_;
  return sampler.Sample(sample_logits_, sampler_scratch_);
}

// Log-probabilities come from the logits before penalties and temperature (as OpenAI and
// vLLM report them), but after a constraint's mask: a constrained choice reports the
// distribution it was sampled from, renormalized over the allowed tokens (as vLLM's
// processed logprobs do), so disallowed tokens never show among the alternatives.
const TokenLogProbs* Engine::LogProbs(const RequestState& request, std::span<const float> logits,
                                      int32_t token) {
  if (request.request().top_logprobs < 0) return nullptr;
  ComputeLogProbs(logits, token, request.request().top_logprobs, &logprobs_);
  std::erase_if(logprobs_.top, [](const TokenLogProb& entry) { return entry.logprob == -INFINITY; });
  return &logprobs_;
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

void Engine::Touch(RequestState& request) {
  if (request.touched) return;
  request.touched = true;
  touched_.push_back(&request);
}

// Before the outputs, so that whoever sees a stream end can already see the blocks it
// stored. Consecutive changes of one kind make one event.
void Engine::PublishKvEvents() {
  if (!kv_.has_events()) return;
  kv_changes_.clear();
  kv_.TakeEvents(&kv_changes_);
  std::vector<KvEvent> events;
  for (const PrefixCacheEvent& change : kv_changes_) {
    const KvEvent::Type type =
        change.kind == PrefixCacheEvent::Kind::kStored ? KvEvent::Type::kStored : KvEvent::Type::kEvicted;
    if (events.empty() || events.back().type != type) events.push_back({type, {}});
    events.back().block_hashes.push_back(change.hash);
  }
  kv_events_.Publish(std::move(events));
}

// Stats first, so that whoever sees a stream end also sees the blocks it freed.
void Engine::Publish() {
  queue_.PublishStats(CurrentStats(/*ready=*/true));
  for (RequestState* request : touched_) {
    request->touched = false;
    if (std::optional<RequestOutput> output = request->TakeOutput()) {
      request->channel().Push(std::move(*output));
    }
    if (request->finished()) requests_.erase(request->id());
  }
  touched_.clear();
}

EngineStats Engine::CurrentStats(bool ready) const {
  EngineStats stats;
  stats.num_running = scheduler_.num_running();
  stats.num_waiting = scheduler_.num_waiting();
  stats.num_free_blocks = kv_.num_free_blocks();
  stats.num_total_blocks = kv_.num_total_blocks();
  stats.kv_bytes_per_block = kv_bytes_per_block_;
  stats.num_preemptions = scheduler_.num_preemptions();
  stats.num_steps = num_steps_;
  stats.busy_us = busy_us_;
  stats.num_prompt_tokens_computed = num_prompt_tokens_computed_;
  stats.num_generation_tokens = num_generation_tokens_;
  stats.step_sequences = step_sequences_;
  stats.step_tokens = step_tokens_;
  stats.prefix_caching = kv_.prefix_caching();
  stats.num_cached_blocks = kv_.num_cached_blocks();
  stats.prefix_cache_queried_tokens = kv_.stats().num_queried_tokens;
  stats.prefix_cache_hit_tokens = kv_.stats().num_hit_tokens;
  stats.prefix_cache_evicted_blocks = kv_.stats().num_evicted_blocks;
  stats.prefix_cache_expired_blocks = kv_.stats().num_expired_blocks;
  if (options_.proposer != nullptr) stats.spec_decode_method = SpeculativeMethodName(options_.proposer->method());
  stats.spec_decode_num_drafts = spec_num_drafts_;
  stats.spec_decode_num_draft_tokens = spec_num_draft_tokens_;
  stats.spec_decode_num_accepted_tokens = spec_num_accepted_tokens_;
  stats.spec_decode_num_accepted_tokens_per_pos = spec_accepted_per_pos_;
  stats.ready = ready;
  return stats;
}

void Engine::FailAll(const Status& error) {
  for (auto& [id, request] : requests_) {
    for (int32_t i = 0; i < request->num_choices(); ++i) scheduler_.Finish(request->choice(i).seq);
    request->Fail(error);
    if (std::optional<RequestOutput> output = request->TakeOutput()) {
      request->channel().Push(std::move(*output));
    }
  }
  requests_.clear();
  touched_.clear();
}

}  // namespace surge
