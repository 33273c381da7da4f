// EmbeddingRequest: a parsed and validated POST /v1/embeddings body, and the response
// built from the pooled vectors (OpenAI's shape, floats or base64).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/completion_request.h"
#include "api/error.h"
#include "api/request_body.h"

namespace surge::api {

struct EmbeddingRequest {
  std::string model;  // "" when absent
  // OpenAI's input: a string, a list of strings, a list of token ids or a list of such
  // lists; never empty, no input empty, at most RequestLimits::max_embedding_inputs.
  std::vector<CompletionPrompt> inputs;
  bool base64 = false;  // encoding_format "base64"; "float" (the default) is false
  // Keep the first D values and L2-renormalize; >= 1 here, <= the model's width checked
  // by the server (CheckDimensions).
  std::optional<int64_t> dimensions;
};

// Unknown fields are refused by name; `user` is accepted metadata (it changes nothing).
ApiResult<EmbeddingRequest> ParseEmbeddingRequest(std::string_view body, const RequestLimits& limits = {});

// 400 on "dimensions" unless it is absent or in [1, embedding_size].
std::optional<ApiError> CheckDimensions(const EmbeddingRequest& request, int64_t embedding_size);

// The first `dimensions` values of an L2-normalized vector, L2-normalized again.
std::vector<float> TruncateEmbedding(std::span<const float> embedding, int64_t dimensions);

// Base64 (RFC 4648, padded) of the values as little-endian float32, as OpenAI encodes them.
std::string EmbeddingToBase64(std::span<const float> embedding);

// {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": ...}],
//  "model": model, "usage": {"prompt_tokens": n, "total_tokens": n}}
std::string EmbeddingResponseJson(const std::string& model, const std::vector<std::vector<float>>& embeddings,
                                  bool base64, int64_t num_prompt_tokens);

}  // namespace surge::api
