// ForwardBatch: one forward pass over a flat list of tokens from many sequences, some
// prefilling a chunk of their prompt and some decoding one token.
#pragma once

#include <cstdint>
#include <span>

#include "kv/kv_layout.h"

namespace surge {

// One sequence's slice of the flat batch.
struct SequenceChunk {
  int32_t token_begin = 0;     // its tokens are rows [token_begin, token_begin + num_tokens)
  int32_t num_tokens = 0;
  int32_t start_position = 0;  // position of its first token; positions before it are in the KV
  // Blocks holding positions [0, start_position + num_tokens); block i holds positions
  // [i * block_size, (i + 1) * block_size). The forward writes this chunk's K/V into them.
  std::span<const BlockId> block_table;
};

struct ForwardBatch {
  std::span<const int32_t> token_ids;      // [num_tokens]
  std::span<const SequenceChunk> sequences;
  // Rows of the flat batch whose logits the caller wants, in the order they are written
  // to the logits output ([logits_rows.size(), vocab_size]). Usually each sequence's last row.
  std::span<const int32_t> logits_rows;
  // Rows whose final-normed hidden state (the lm_head's input) the caller wants, in the
  // order they are written to the hidden output ([hidden_rows.size(), hidden_size]):
  // what embeddings pool. Usually empty.
  std::span<const int32_t> hidden_rows = {};
  // When set, [num_tokens, hidden_size]: the rows the decoder layers start from instead
  // of the token embeddings (DeepSeek-V3's MTP module feeds its projected input this way;
  // token_ids must still name each row's token).
  std::span<const float> input_rows = {};
  // The hidden output before the final norm instead of after it (what a further MTP step
  // feeds back as its previous hidden state).
  bool hidden_before_final_norm = false;
};

}  // namespace surge
