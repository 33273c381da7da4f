// Generator: runs one request to completion on a Model, without the batching engine.
// It backs `surge generate` and the golden tests; the server uses the engine loop instead.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/engine_client.h"
#include "engine/sampler.h"
#include "model/model.h"

namespace surge {

struct GenerateOptions {
  int32_t max_tokens = 128;
  SamplingParams sampling;
  std::vector<int32_t> stop_token_ids;  // generation ends after emitting one of these
  bool ignore_eos = false;
};

struct GenerateResult {
  std::vector<int32_t> output_ids;
  FinishReason finish_reason = FinishReason::kLength;
};

// Called once per generated token with the logits it was sampled from ([vocab_size],
// before sampling changed them). Returning false stops generation (finish reason kStop).
using TokenCallback = std::function<bool(int32_t token, std::span<const float> logits)>;

class Generator {
 public:
  explicit Generator(Model& model, int32_t block_size = 16, KvDType kv_dtype = KvDType::kF32)
      : model_(model), block_size_(block_size), kv_dtype_(kv_dtype) {}

  // Prefills `prompt_ids` in one pass, then decodes one token at a time. Errors: empty
  // prompt, ids outside the vocabulary, prompt + max_tokens beyond the model's context.
  StatusOr<GenerateResult> Generate(std::span<const int32_t> prompt_ids,
                                    const GenerateOptions& options,
                                    const TokenCallback& on_token = nullptr);

 private:
  Status Validate(std::span<const int32_t> prompt_ids, const GenerateOptions& options) const;

  Model& model_;
  int32_t block_size_;
  KvDType kv_dtype_;
};

}  // namespace surge
