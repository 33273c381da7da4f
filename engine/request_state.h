// RequestState: what the engine keeps about one request while it runs -- its choices
// (each a Sequence for the scheduler plus its sampler, detokenizer and stop-string
// matcher), the stop rules, and the output produced since the last publish.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "engine/choice_constraint.h"
#include "engine/constraint/token_vocabulary.h"
#include "engine/detokenizer.h"
#include "engine/embedding_pooler.h"
#include "engine/engine_client.h"
#include "engine/request_channel.h"
#include "engine/sampler.h"
#include "engine/sequence.h"
#include "engine/stop_string_matcher.h"
#include "tokenizer/tokenizer.h"

namespace surge {

struct Choice {
  Choice(const EngineRequest& request, const SamplingParams& sampling, const Tokenizer& tokenizer);

  Sequence seq;
  SequenceSampler sampler;
  Detokenizer detokenizer;
  StopStringMatcher stop_matcher;
  ChoiceConstraint constraint;  // request.constraint's matcher (inactive without one)
  ChoiceDelta delta;  // news since the last publish
  bool finished = false;
};

class RequestState {
 public:
  // Choice i gets sequence id first_sequence_id + i and, when the request has a seed,
  // seed + i (vLLM's convention for n > 1: choice i samples as a request with that seed
  // would). Choice 0 prefills the prompt; the others fork from it (kForkPending).
  // `stop_token_ids`: EOS ids (unless ignore_eos) and the request's stop_token_ids.
  // `vocabulary` (borrowed) turns tokens into bytes for a constraint's matchers.
  // `hidden_size` sizes an embedding request's pooler.
  RequestState(RequestId id, EngineRequest request, std::vector<int32_t> stop_token_ids,
               SequenceId first_sequence_id, const Tokenizer& tokenizer,
               const TokenVocabulary& vocabulary, std::shared_ptr<RequestChannel> channel,
               int32_t hidden_size = 0);

  RequestId id() const { return id_; }
  const EngineRequest& request() const { return request_; }
  int32_t num_choices() const { return static_cast<int32_t>(choices_.size()); }
  Choice& choice(int32_t index) { return *choices_[index]; }
  RequestChannel& channel() { return *channel_; }

  // Choices > 0 have forked from choice 0 (or there are none).
  bool forked() const { return forked_; }
  void set_forked() { forked_ = true; }
  // Monotonic seconds: arrival (also every choice's aging clock) and first scheduling.
  void SetArrivalTime(double seconds);
  void SetScheduledTime(double seconds) { queue_time_s_ = seconds - arrival_time_s_; }
  double arrival_time_s() const { return arrival_time_s_; }
  bool scheduled() const { return queue_time_s_.has_value(); }

  // Whether the engine already listed this request for the next publish.
  bool touched = false;

  // Appends a sampled token to `choice`, advances its constraint, and applies the stop
  // rules in vLLM's order: a stop token (EOS or stop_token_ids: kept in token_ids, not in
  // the text), a stop string (the text before it is emitted, the rest never), a complete
  // constrained output ("stop"), max_tokens. `logprobs` may be null.
  // Returns true when the choice has finished; the caller then frees its sequence.
  bool AppendToken(Choice& choice, int32_t token, const PositionLogProbs* logprobs);

  // prompt_logprobs requests: the score of the prompt token at `position`. A position seen
  // before (computed again after a preemption) is not sent twice.
  void AddPromptLogprob(int32_t position, const PositionLogProbs& logprobs);
  // Ends every unfinished choice with `reason` (a prompt-only request: max_tokens 0).
  void FinishAll(FinishReason reason);

  // Embedding requests only (null otherwise): pools the hidden states of each chunk.
  EmbeddingPooler* pooler() { return pooler_.get(); }
  // Ends an embedding request: its prompt is complete; the final output carries the vector.
  void FinishEmbedding();

  // Ends every unfinished choice with kAbort.
  void Abort();
  // Ends the request with an error (engine shutting down).
  void Fail(Status error);

  bool finished() const { return num_unfinished_ == 0 || !error_.ok(); }
  bool failed() const { return !error_.ok(); }
  // The news since the last call as one output; nullopt when there is none.
  std::optional<RequestOutput> TakeOutput();

 private:
  bool Finish(Choice& choice, FinishReason reason);

  const RequestId id_;
  const EngineRequest request_;
  const std::vector<int32_t> stop_token_ids_;
  const TokenVocabulary& vocabulary_;
  std::shared_ptr<RequestChannel> channel_;
  std::vector<std::unique_ptr<Choice>> choices_;  // [n]; stable addresses for the scheduler
  int32_t num_unfinished_ = 0;
  int32_t num_completion_tokens_ = 0;
  bool forked_ = false;
  bool has_news_ = false;
  Status error_;
  double arrival_time_s_ = 0;
  std::optional<double> queue_time_s_;  // set when first scheduled
  int32_t next_prompt_logprob_position_ = 1;  // prompt_logprobs: the next position to send
  std::vector<TokenLogprob> prompt_logprobs_; // scored since the last output
  std::unique_ptr<EmbeddingPooler> pooler_;  // embedding requests only
  std::vector<float> embedding_;             // [hidden_size] once FinishEmbedding ran
};

// The requests with news for the next publish, each listed once (RequestState::touched;
// whoever takes the list clears the flags).
class TouchedRequests {
 public:
  void Add(RequestState& request) {
    if (request.touched) return;
    request.touched = true;
    requests_.push_back(&request);
  }
  std::span<RequestState* const> requests() const { return requests_; }
  bool empty() const { return requests_.empty(); }
  void Clear() { requests_.clear(); }

 private:
  std::vector<RequestState*> requests_;
};

}  // namespace surge
