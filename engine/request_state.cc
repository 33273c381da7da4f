#include "engine/request_state.h"

#include <algorithm>
#include <utility>

namespace surge {
namespace {

TokenLogprob ToOutput(const PositionLogProbs& logprobs) {
  TokenLogprob out;
  out.token = logprobs.chosen.token;
  out.logprob = logprobs.chosen.logprob;
  out.top.reserve(logprobs.top.size());
  for (const ScoredToken& entry : logprobs.top) out.top.emplace_back(entry.token, entry.logprob);
  return out;
}

}  // namespace

Choice::Choice(const EngineRequest& request, const SamplingParams& sampling,
               const Tokenizer& tokenizer)
    : sampler(sampling, request.prompt_ids),
      detokenizer(tokenizer, request.prompt_ids, request.skip_special_tokens),
      stop_matcher(request.stop.stop),
      constraint(request.constraint, request.constraint_start_token_id) {}

RequestState::RequestState(RequestId id, EngineRequest request, std::vector<int32_t> stop_token_ids,
                           SequenceId first_sequence_id, const Tokenizer& tokenizer,
                           const TokenVocabulary& vocabulary, std::shared_ptr<RequestChannel> channel,
                           int32_t hidden_size)
    : id_(id),
      request_(std::move(request)),
      stop_token_ids_(std::move(stop_token_ids)),
      vocabulary_(vocabulary),
      channel_(std::move(channel)),
      num_unfinished_(request_.n) {
  const int32_t num_prompt_tokens = static_cast<int32_t>(request_.prompt_ids.size());
  for (int32_t i = 0; i < request_.n; ++i) {
    SamplingParams sampling = request_.sampling;
    if (sampling.seed) *sampling.seed += static_cast<uint64_t>(i);
    auto choice = std::make_unique<Choice>(request_, sampling, tokenizer);
    Sequence& seq = choice->seq;
    seq.id = first_sequence_id + i;
    seq.token_ids.reserve(num_prompt_tokens + (request_.embed ? 0 : request_.stop.max_tokens));
    seq.token_ids.assign(request_.prompt_ids.begin(), request_.prompt_ids.end());
    seq.num_prompt_tokens = num_prompt_tokens;
    seq.priority = request_.priority;
    seq.num_seq_slots = i == 0 ? request_.n : 1;
    seq.status = i == 0 ? SequenceStatus::kWaiting : SequenceStatus::kForkPending;
    seq.request = this;
    seq.choice_index = i;
    choice->delta.index = i;
    choices_.push_back(std::move(choice));
  }
  forked_ = request_.n == 1;
  if (request_.prompt_logprobs >= 0) choices_[0]->seq.output = SequenceOutput::kPromptLogits;
  if (request_.embed) {
    pooler_ = std::make_unique<EmbeddingPooler>(*request_.embed, hidden_size, request_.embed_normalize);
    choices_[0]->seq.output = *request_.embed == PoolingKind::kLast ? SequenceOutput::kLastHidden
                                                                     : SequenceOutput::kAllHidden;
  }
}

void RequestState::FinishEmbedding() {
  Choice& choice = *choices_[0];
  embedding_ = pooler_->Finish();
  choice.delta.finish_reason = FinishReason::kStop;
  choice.finished = true;
  --num_unfinished_;
  has_news_ = true;
}

void RequestState::SetArrivalTime(double seconds) {
  arrival_time_s_ = seconds;
  for (auto& choice : choices_) choice->seq.arrival_time_s = seconds;
}

bool RequestState::AppendToken(Choice& choice, int32_t token, const PositionLogProbs* logprobs) {
  choice.seq.token_ids.push_back(token);
  choice.sampler.Accept(token);
  const bool complete = choice.constraint.Accept(vocabulary_, token);
  choice.delta.token_ids.push_back(token);
  if (logprobs != nullptr) choice.delta.logprobs.push_back(ToOutput(*logprobs));
  ++num_completion_tokens_;
  has_news_ = true;
  if (std::find(stop_token_ids_.begin(), stop_token_ids_.end(), token) != stop_token_ids_.end()) {
    return Finish(choice, FinishReason::kStop);
  }
  std::string token_text = choice.detokenizer.Add(token);
  if (logprobs != nullptr) choice.delta.logprobs.back().text = token_text;
  StopStringMatcher::Result text = choice.stop_matcher.Add(std::move(token_text));
  choice.delta.text += text.text;
  if (text.stopped || complete) return Finish(choice, FinishReason::kStop);
  if (choice.seq.num_output_tokens() >= request_.stop.max_tokens) {
    return Finish(choice, FinishReason::kLength);
  }
  return false;
}

// Text still held back -- an incomplete character, a possible stop string that never
// completed -- is emitted now, unless a stop string matched.
bool RequestState::Finish(Choice& choice, FinishReason reason) {
  if (!choice.stop_matcher.stopped()) {
    std::string held = choice.detokenizer.Flush();
    if (!choice.delta.logprobs.empty()) choice.delta.logprobs.back().text += held;
    StopStringMatcher::Result text = choice.stop_matcher.Add(std::move(held));
    choice.delta.text += text.text;
    if (text.stopped) {
      reason = FinishReason::kStop;
    } else {
      choice.delta.text += choice.stop_matcher.Flush();
    }
  }
  choice.delta.finish_reason = reason;
  choice.finished = true;
  --num_unfinished_;
  return true;
}

void RequestState::AddPromptLogprob(int32_t position, const PositionLogProbs& logprobs) {
  if (position != next_prompt_logprob_position_) return;
  ++next_prompt_logprob_position_;
  prompt_logprobs_.push_back(ToOutput(logprobs));
  has_news_ = true;
}

void RequestState::FinishAll(FinishReason reason) {
  for (auto& choice : choices_) {
    if (!choice->finished) Finish(*choice, reason);
  }
  has_news_ = true;
}

void RequestState::Abort() {
  for (auto& choice : choices_) {
    if (choice->finished) continue;
    choice->delta.finish_reason = FinishReason::kAbort;
    choice->finished = true;
    --num_unfinished_;
    has_news_ = true;
  }
}

void RequestState::Fail(Status error) {
  error_ = std::move(error);
  has_news_ = true;
}

std::optional<RequestOutput> RequestState::TakeOutput() {
  if (!has_news_) return std::nullopt;
  has_news_ = false;
  RequestOutput output;
  for (auto& choice : choices_) {
    ChoiceDelta& delta = choice->delta;
    if (delta.token_ids.empty() && delta.text.empty() && !delta.finish_reason) continue;
    output.choices.push_back(std::move(delta));
    delta = ChoiceDelta();
    delta.index = choice->seq.choice_index;
  }
  output.finished = finished();
  output.error = error_;
  output.num_prompt_tokens = static_cast<int32_t>(request_.prompt_ids.size());
  output.num_cached_prompt_tokens = choices_[0]->seq.num_cached_tokens;
  output.num_completion_tokens = num_completion_tokens_;
  output.queue_time_s = queue_time_s_;
  output.embedding = std::move(embedding_);
  output.prompt_logprobs = std::move(prompt_logprobs_);
  prompt_logprobs_.clear();
  return output;
}

}  // namespace surge
