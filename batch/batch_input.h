// Validation of a batch's input file (JSONL, one request per line) before anything runs:
// every problem is found up front, and any one fails the whole batch, as OpenAI does.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "batch/batch_types.h"

namespace surge::batch {

// The endpoints a batch may target.
inline constexpr std::string_view kBatchEndpoints[] = {"/v1/chat/completions", "/v1/completions", "/v1/embeddings"};
bool IsBatchEndpoint(std::string_view url);

struct BatchInputLimits {
  size_t max_lines = 50'000;   // OpenAI's cap on requests per batch
  size_t max_errors = 100;     // errors reported (validation goes on counting none past it)
  size_t max_line_bytes = 4 << 20;
  int max_json_depth = 64;
};

struct ParsedBatchInput {
  std::vector<BatchLine> lines;    // empty when errors is not
  std::vector<BatchError> errors;  // each with its 1-based line
};

// Each non-blank line must be a JSON object of exactly {custom_id: non-empty string, unique;
// method: "POST"; url: `endpoint` (any of kBatchEndpoints when `endpoint` is empty);
// body: an object without "stream": true}. The body is kept as compact JSON.
ParsedBatchInput ParseBatchInput(std::string_view jsonl, std::string_view endpoint, const BatchInputLimits& limits = {});

}  // namespace surge::batch
