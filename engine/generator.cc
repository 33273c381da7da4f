#include "engine/generator.h"

#include <algorithm>
#include <numeric>

#include "kv/kv_storage.h"

namespace surge {

Status Generator::Validate(std::span<const int32_t> prompt_ids,
                           const GenerateOptions& options) const {
  const ModelConfig& config = model_.config();
  if (prompt_ids.empty()) return InvalidArgumentError("the prompt has no tokens");
  if (options.max_tokens < 0) return InvalidArgumentError("max_tokens must be >= 0");
  for (int32_t id : prompt_ids) {
    if (id < 0 || id >= config.vocab_size) {
      return InvalidArgumentError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                  std::to_string(config.vocab_size) + ")");
    }
  }
  int64_t total = static_cast<int64_t>(prompt_ids.size()) + options.max_tokens;
  if (total > config.max_position_embeddings) {
    return InvalidArgumentError("prompt (" + std::to_string(prompt_ids.size()) + " tokens) + max_tokens (" +
                                std::to_string(options.max_tokens) + ") exceeds the model's context of " +
                                std::to_string(config.max_position_embeddings) + " tokens");
  }
  return options.sampling.Validate();
}

StatusOr<GenerateResult> Generator::Generate(std::span<const int32_t> prompt_ids,
                                             const GenerateOptions& options,
                                             const TokenCallback& on_token) {
  RETURN_IF_ERROR(Validate(prompt_ids, options));
  const int32_t vocab_size = static_cast<int32_t>(model_.config().vocab_size);
  const int32_t max_positions = static_cast<int32_t>(prompt_ids.size()) + options.max_tokens;
  const int32_t num_blocks = (max_positions + block_size_ - 1) / block_size_;
  KvStorage kv(model_.kv_layout(block_size_, kv_dtype_), num_blocks);
  // One sequence owns the whole storage, so its block table is simply 0..num_blocks-1.
  std::vector<BlockId> block_table(num_blocks);
  std::iota(block_table.begin(), block_table.end(), 0);

  std::vector<int32_t> eos = options.ignore_eos ? std::vector<int32_t>{} : options.stop_token_ids;
  SequenceSampler sampler(options.sampling, prompt_ids);
  std::vector<float> logits(vocab_size);   // [vocab_size]
  std::vector<float> sampled(vocab_size);  // [vocab_size], the sampler may modify it
  std::vector<int32_t> tokens(prompt_ids.begin(), prompt_ids.end());
  GenerateResult result;
  int32_t position = 0;
  while (static_cast<int32_t>(result.output_ids.size()) < options.max_tokens) {
    int32_t num_new = static_cast<int32_t>(tokens.size()) - position;
    SequenceChunk chunk{0, num_new, position, block_table};
    int32_t last_row = num_new - 1;
    ForwardBatch batch{std::span<const int32_t>(tokens).subspan(position), {&chunk, 1}, {&last_row, 1}};
    model_.Forward(batch, kv, logits);
    position += num_new;

    std::copy(logits.begin(), logits.end(), sampled.begin());
    int32_t token = sampler.Sample(sampled);
    sampler.Accept(token);
    result.output_ids.push_back(token);
    tokens.push_back(token);
    bool keep_going = on_token ? on_token(token, logits) : true;
    if (!keep_going || std::find(eos.begin(), eos.end(), token) != eos.end()) {
      result.finish_reason = FinishReason::kStop;
      break;
    }
  }
  return result;
}

}  // namespace surge
