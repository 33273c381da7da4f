#include "engine/spec_decode/spec_decoder.h"

#include <algorithm>
#include <utility>

#include "base/check.h"

namespace surge {

SpecDecoder::SpecDecoder(SpecDecodeOptions options, int32_t hidden_size)
    : options_(std::move(options)),
      hidden_size_(static_cast<size_t>(hidden_size)),
      accepted_per_pos_(options_.proposer ? options_.num_speculative_tokens : 0) {}

// Asks the proposer for every decoding sequence's guesses, each up to its own k and never
// past its max_tokens (the token after the last draft is the target's own). A step with
// more decodes than speculative_max_decodes proposes nothing.
void SpecDecoder::Propose(std::span<Sequence* const> running) {
  if (options_.proposer == nullptr) return;
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

// A decode with drafts d_1..d_k has logits rows 0..k: row i scores the token after d_i
// (row 0: after the sequence's own last token). Each row is sampled or verified exactly
// as a decode step would be -- constraint mask, penalties and sampler state as of the
// tokens taken so far -- until a draft is rejected (the target's own token replaces it)
// or the sequence finishes; when every draft is taken, the last row gives one more token.
// result.num_accepted_drafts: the drafts taken (their K/V, computed by this pass, is kept).
void SpecDecoder::Verify(ChoiceSampler& sampler, RequestState& request, Choice& choice,
                         std::span<const float> rows, const ScheduledChunk& chunk, ChunkResult& result) {
  const std::vector<int32_t>& drafts = chunk.seq->draft_token_ids;
  const int32_t num_drafts = chunk.num_draft_tokens;
  const size_t vocab_size = rows.size() / (static_cast<size_t>(num_drafts) + 1);
  int32_t num_accepted = 0;
  for (int32_t i = 0; i <= num_drafts; ++i) {
    std::span<const float> row = rows.subspan(static_cast<size_t>(i) * vocab_size, vocab_size);
    if (i == num_drafts) {
      result.finished = sampler.TakeToken(request, choice, row);
      break;
    }
    const ChoiceSampler::Verdict verdict = sampler.TakeOrReplace(request, choice, row, drafts[i]);
    if (verdict.accepted) {
      ++num_accepted;
      ++accepted_per_pos_[i];
    }
    result.finished = verdict.finished;
    if (verdict.finished || !verdict.accepted) break;
  }
  ++num_drafts_;
  num_draft_tokens_ += num_drafts;
  num_accepted_tokens_ += num_accepted;
  // The next proposal: one longer after a full acceptance, else what was taken plus one.
  Sequence& seq = choice.seq;
  seq.num_speculative_tokens = num_accepted == num_drafts
                                   ? std::min(seq.num_speculative_tokens + 1, options_.num_speculative_tokens)
                                   : std::max(num_accepted + 1, 1);
  result.num_accepted_drafts = num_accepted;
}

// An MTP proposer reads the target's hidden state of every position a sequence keeps:
// each chunk's known rows and its accepted drafts (a rejected draft's row is not the
// sequence's).
void SpecDecoder::ShowTargetHidden(const SchedulerOutput& plan, std::span<const ChunkResult> results,
                                   const ModelRunner& runner) {
  if (options_.proposer == nullptr || !options_.proposer->wants_target_hidden()) return;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    if (chunk.seq->output != SequenceOutput::kTokens) continue;
    const int32_t num_kept = chunk.num_tokens - chunk.num_draft_tokens + results[i].num_accepted_drafts;
    options_.proposer->ObserveTargetHidden(*chunk.seq, chunk.start_position,
                                           runner.chunk_hidden(i).first(static_cast<size_t>(num_kept) * hidden_size_));
  }
}

void SpecDecoder::AddStats(EngineStats& stats) const {
  if (options_.proposer != nullptr) stats.spec_decode_method = SpeculativeMethodName(options_.proposer->method());
  stats.spec_decode_num_drafts = num_drafts_;
  stats.spec_decode_num_draft_tokens = num_draft_tokens_;
  stats.spec_decode_num_accepted_tokens = num_accepted_tokens_;
  stats.spec_decode_num_accepted_tokens_per_pos = accepted_per_pos_;
}

}  // namespace surge
