// KvCacheManager: per-sequence block tables over a BlockPool -- the only thing the
// scheduler asks for KV memory. It answers "here are the blocks" or "no room" (false);
// the pool behind it is invisible to everyone else (vLLM v1's KVCacheManager).
//
// The API is token-aware (Allocate gets the sequence's token ids, NumCachedTokens gets a
// prompt) so that automatic prefix caching -- full blocks keyed by a chained hash of
// (parent hash, token ids), freed hashed blocks kept in an LRU until their space is
// needed -- can be added inside this class without changing the scheduler.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "kv/block_pool.h"
#include "kv/kv_layout.h"

namespace surge {

// One sequence (one choice of one request) whose K/V the cache holds.
using SequenceId = int64_t;

class KvCacheManager {
 public:
  // `num_blocks` >= 1 blocks of layout.block_size tokens each.
  KvCacheManager(const KvLayout& layout, int32_t num_blocks);

  int32_t block_size() const { return block_size_; }
  // Blocks that hold `num_tokens` positions.
  int32_t NumBlocksFor(int64_t num_tokens) const;

  // How many leading tokens of a new sequence with these tokens already have their K/V
  // in the cache, so that they need not be computed. Always a whole number of blocks and
  // less than token_ids.size() (the last token is always computed, for its logits).
  // Without prefix caching: 0. Allocate for a new sequence attaches those blocks.
  int32_t NumCachedTokens(std::span<const int32_t> token_ids) const;

  // Grows `seq`'s block table to cover positions [0, num_tokens). `token_ids` are the
  // sequence's known tokens (at least num_tokens of them); the K/V of those past the
  // computed ones will be written by the next forward pass. A sequence the manager does
  // not know starts a new table. Returns false and changes nothing when the pool lacks
  // the blocks: capacity is not an error, the scheduler decides whom to preempt.
  [[nodiscard]] bool Allocate(SequenceId seq, std::span<const int32_t> token_ids,
                              int32_t num_tokens);

  // Starts `child` (unknown so far) sharing, by reference count, the blocks of `parent`
  // that positions [0, num_tokens) fill completely. A partly filled last block is not
  // shared: the child recomputes those few tokens into a block of its own, so no block
  // is ever written by two sequences. Returns the number of positions shared (a multiple
  // of block_size): the child's computed tokens. Never needs a free block.
  int32_t Fork(SequenceId parent, SequenceId child, int32_t num_tokens);

  // Drops all of `seq`'s blocks at once; a block returns to the pool when no other
  // sequence shares it. Unknown ids are ignored.
  void Free(SequenceId seq);

  bool Contains(SequenceId seq) const { return tables_.contains(seq); }
  // Block i holds positions [i * block_size, (i + 1) * block_size). Valid until the next
  // Allocate or Free of `seq`. Empty for an unknown sequence.
  std::span<const BlockId> BlockTable(SequenceId seq) const;

  int32_t num_free_blocks() const { return pool_.num_free_blocks(); }
  int32_t num_used_blocks() const { return pool_.num_used_blocks(); }
  int32_t num_total_blocks() const { return pool_.num_total_blocks(); }
  int32_t num_sequences() const { return static_cast<int32_t>(tables_.size()); }

  // For tests, after every step: each block's reference count equals the number of
  // block-table entries naming it, no table names a block twice, and free + used ==
  // total. Internal error naming the first broken invariant.
  Status CheckInvariants() const;

 private:
  int32_t block_size_;
  BlockPool pool_;
  std::unordered_map<SequenceId, std::vector<BlockId>> tables_;  // seq -> [num_blocks]
};

}  // namespace surge
