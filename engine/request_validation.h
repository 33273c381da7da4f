// Request validation: what Engine::Submit checks on the client thread that submits, before
// the request is queued, so that a request that can never run is refused at once with a
// message naming what is wrong -- tokens outside the vocabulary, a field out of range
// (request_limits.h), more tokens than the model's context or the whole KV cache holds.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "engine/engine_client.h"

namespace surge {

// What the checks depend on: the model and the engine's options. Immutable after start-up.
struct RequestValidationContext {
  int32_t vocab_size = 0;
  int64_t max_context = 0;  // the model's max_position_embeddings
  bool is_encoder = false;  // a sentence encoder: embeddings only
  int32_t max_num_seqs = 0;
  int32_t max_num_batched_tokens = 0;
  int32_t block_size = 0;  // tokens per KV block
  int32_t num_kv_blocks = 0;
};

// InvalidArgument saying why `request` can never run; OK otherwise.
Status ValidateRequest(const EngineRequest& request, const RequestValidationContext& context);

}  // namespace surge
