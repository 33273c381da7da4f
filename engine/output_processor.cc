#include "engine/output_processor.h"

namespace surge {

OutputProcessor::OutputProcessor(Scheduler& scheduler, ConstraintMasker& masker, SpecDecoder& spec_decoder,
                                 int32_t vocab_size)
    : scheduler_(scheduler), spec_decoder_(spec_decoder), vocab_size_(vocab_size), sampler_(masker, vocab_size) {}

void OutputProcessor::Process(const SchedulerOutput& plan, std::span<const float> logits,
                              const ModelRunner& runner, std::vector<ChunkResult>& results,
                              TouchedRequests& touched) {
  size_t row = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    const Sequence& seq = *chunk.seq;
    const int32_t num_known = chunk.num_tokens - chunk.num_draft_tokens;
    const bool decode = num_known == 1 && chunk.start_position >= seq.num_prompt_tokens;
    num_prompt_tokens_computed_ += num_known - (decode ? 1 : 0);
    if (seq.output == SequenceOutput::kLastHidden || seq.output == SequenceOutput::kAllHidden) {
      PoolChunk(chunk, runner.chunk_hidden(i), results[i], touched);
    } else {
      row += ProcessTokenChunk(chunk, logits, row, results[i], touched);
    }
  }
  spec_decoder_.ShowTargetHidden(plan, results, runner);
}

// A chunk's rows begin at `row`: first those scoring its prompt (echo), then, when it
// samples, 1 + num_draft_tokens rows to sample or verify.
size_t OutputProcessor::ProcessTokenChunk(const ScheduledChunk& chunk, std::span<const float> logits,
                                          size_t row, ChunkResult& result, TouchedRequests& touched) {
  RequestState& request = *chunk.seq->request;
  const size_t num_scoring_rows = static_cast<size_t>(ModelRunner::NumPromptLogitsRows(chunk));
  if (num_scoring_rows > 0) {
    ScorePrompt(chunk, logits.subspan(row * vocab_size_, num_scoring_rows * vocab_size_));
    touched.Add(request);
  }
  if (!chunk.sample) return num_scoring_rows;
  const size_t num_rows = 1 + static_cast<size_t>(chunk.num_draft_tokens);
  std::span<const float> rows = logits.subspan((row + num_scoring_rows) * vocab_size_, num_rows * vocab_size_);
  if (request.request().stop.max_tokens == 0) {  // the prompt scored, nothing to generate
    FinishAllChoices(request, FinishReason::kLength);
  } else if (!request.forked()) {
    SampleFirstTokensAndFork(request, rows, result);
  } else if (chunk.num_draft_tokens > 0) {
    spec_decoder_.Verify(sampler_, request, request.choice(chunk.seq->choice_index), rows, chunk, result);
  } else {
    result.finished = sampler_.TakeToken(request, request.choice(chunk.seq->choice_index), rows);
  }
  if (request.failed()) {  // a constraint could not be followed (ChoiceSampler::Constrain)
    FinishAllChoices(request, FinishReason::kAbort);
    result.finished = true;
  }
  touched.Add(request);
  return num_scoring_rows + num_rows;
}

// Embeddings run as prefill-only sequences: each chunk's hidden rows are pooled, and the
// chunk that completes the prompt ends the request and frees its blocks at once. They
// bypass the prefix cache both ways: mean pooling needs every token's hidden state, which
// a cache hit would skip (the cache keeps K/V, not hidden states), and documents embedded
// once would only push the chat prefixes that are reused out of the cache's LRU.
void OutputProcessor::PoolChunk(const ScheduledChunk& chunk, std::span<const float> rows, ChunkResult& result,
                                TouchedRequests& touched) {
  RequestState& request = *chunk.seq->request;
  request.pooler()->Add(chunk.start_position, rows);
  if (!chunk.sample) return;
  request.FinishEmbedding();
  result.finished = true;
  touched.Add(request);
}

// Prompt logprobs (echo): row i of `rows` is the logits at position start + i, which score
// the prompt's token at start + i + 1, as the model saw it (no constraint, no penalties).
void OutputProcessor::ScorePrompt(const ScheduledChunk& chunk, std::span<const float> rows) {
  RequestState& request = *chunk.seq->request;
  const int32_t num_rows = static_cast<int32_t>(rows.size() / vocab_size_);
  for (int32_t i = 0; i < num_rows; ++i) {
    const int32_t position = chunk.start_position + i + 1;
    const int32_t token = chunk.seq->token_ids[position];
    ComputeLogProbs(rows.subspan(static_cast<size_t>(i) * vocab_size_, vocab_size_), token,
                    request.request().prompt_logprobs, &prompt_logprobs_);
    request.AddPromptLogprob(position, prompt_logprobs_);
  }
}

void OutputProcessor::FinishAllChoices(RequestState& request, FinishReason reason) {
  request.FinishAll(reason);
  for (int32_t i = 0; i < request.num_choices(); ++i) scheduler_.Finish(request.choice(i).seq);
}

// n > 1: every choice samples its first token from choice 0's prompt logits with its own
// sampler; the unfinished ones then fork, sharing choice 0's full prompt blocks.
void OutputProcessor::SampleFirstTokensAndFork(RequestState& request, std::span<const float> logits,
                                               ChunkResult& result) {
  children_.clear();
  for (int32_t i = 1; i < request.num_choices(); ++i) {
    Choice& choice = request.choice(i);
    if (sampler_.TakeToken(request, choice, logits)) {
      scheduler_.Finish(choice.seq);
    } else {
      children_.push_back(&choice.seq);
    }
  }
  Choice& parent = request.choice(0);
  const bool parent_finished = sampler_.TakeToken(request, parent, logits);
  if (request.failed()) return;  // a constraint failed the request: nothing to fork
  scheduler_.Fork(parent.seq, children_);
  request.set_forked();
  result.finished = parent_finished;
}

}  // namespace surge
