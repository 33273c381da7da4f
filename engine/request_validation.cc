#include "engine/request_validation.h"

#include <string>

#include "engine/request_limits.h"

namespace surge {
namespace {

int64_t NumBlocksFor(int64_t num_tokens, const RequestValidationContext& context) {
  return (num_tokens + context.block_size - 1) / context.block_size;
}

Status ValidateGeneration(const EngineRequest& request, const RequestValidationContext& context) {
  const int64_t num_prompt = static_cast<int64_t>(request.prompt_ids.size());
  // n, max_tokens, logprobs and the sampling parameters (engine/request_limits.h).
  RETURN_IF_ERROR(CheckRequestLimits(request, {context.vocab_size, context.max_num_seqs}));
  for (const std::string& stop : request.stop.stop) {
    if (stop.empty()) return InvalidArgumentError("stop strings must not be empty");
  }
  RETURN_IF_ERROR(request.sampling.Validate());  // logit_bias: what the table does not cover
  const int64_t num_total = num_prompt + request.stop.max_tokens;
  const std::string what = "prompt (" + std::to_string(num_prompt) + " tokens) + max_tokens (" +
                           std::to_string(request.stop.max_tokens) + ")";
  if (num_total > context.max_context) {
    return InvalidArgumentError(what + " exceeds the model's context of " +
                                std::to_string(context.max_context) + " tokens");
  }
  // The last sampled token is never fed back, so a choice holds num_total - 1 positions.
  const int64_t num_blocks = NumBlocksFor(num_total - 1, context);
  if (num_blocks > context.num_kv_blocks) {
    return InvalidArgumentError(what + " needs " + std::to_string(num_blocks) +
                                " KV blocks, more than the whole KV cache (" +
                                std::to_string(context.num_kv_blocks) + " blocks of " +
                                std::to_string(context.block_size) + " tokens)");
  }
  return OkStatus();
}

// An embedding request samples nothing: what only sampling reads is refused, not ignored.
Status ValidateEmbedding(const EngineRequest& request, const RequestValidationContext& context) {
  if (request.n != 1) return InvalidArgumentError("an embedding request has n = 1");
  if (request.top_logprobs != -1 || request.prompt_logprobs != -1 || request.constraint) {
    return InvalidArgumentError("an embedding request takes no logprobs or output constraint");
  }
  const int64_t num_prompt = static_cast<int64_t>(request.prompt_ids.size());
  const std::string what = "input (" + std::to_string(num_prompt) + " tokens)";
  if (num_prompt > context.max_context) {
    return InvalidArgumentError(what + " exceeds the model's context of " +
                                std::to_string(context.max_context) + " tokens");
  }
  if (context.is_encoder && num_prompt > context.max_num_batched_tokens) {
    return InvalidArgumentError(what + " exceeds max_num_batched_tokens (" +
                                std::to_string(context.max_num_batched_tokens) +
                                "): an encoder runs each input whole in one pass");
  }
  if (NumBlocksFor(num_prompt, context) > context.num_kv_blocks) {
    return InvalidArgumentError(what + " needs more KV blocks than the whole KV cache (" +
                                std::to_string(context.num_kv_blocks) + " blocks of " +
                                std::to_string(context.block_size) + " tokens)");
  }
  return OkStatus();
}

}  // namespace

Status ValidateRequest(const EngineRequest& request, const RequestValidationContext& context) {
  if (request.prompt_ids.empty()) return InvalidArgumentError("the prompt has no tokens");
  for (int32_t id : request.prompt_ids) {
    if (id < 0 || id >= context.vocab_size) {
      return InvalidArgumentError("token id " + std::to_string(id) +
                                  " is outside the vocabulary [0, " + std::to_string(context.vocab_size) +
                                  ")");
    }
  }
  if (request.embed) return ValidateEmbedding(request, context);
  if (context.is_encoder) {
    return InvalidArgumentError("this model is a sentence encoder: it computes embeddings only, it cannot generate");
  }
  return ValidateGeneration(request, context);
}

}  // namespace surge
