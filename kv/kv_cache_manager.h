// KvCacheManager: per-sequence block tables over a BlockPool -- the only thing the
// scheduler asks for KV memory. It answers "here are the blocks" or "no room" (false);
// the pool behind it is invisible to everyone else (vLLM v1's KVCacheManager).
//
// Automatic prefix caching lives here: every full block a forward pass computes is filed
// in a PrefixIndex under a chained hash of (parent hash, token ids), verified exactly on a
// hit; a new sequence attaches every leading block that already exists (NumCachedTokens,
// Allocate), shared by reference count; blocks no sequence holds stay cached in the pool's
// LRU and are evicted (oldest first) only when their space is needed, or after an optional
// idle time-to-live.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/block_hash.h"
#include "base/status.h"
#include "kv/block_pool.h"
#include "kv/kv_layout.h"
#include "kv/prefix_index.h"

namespace surge {

// One sequence (one choice of one request) whose K/V the cache holds.
using SequenceId = int64_t;

struct PrefixCacheOptions {
  bool enabled = true;
  // Cached blocks that no sequence has held for this long are released (0: never).
  double ttl_s = 0;
  // The first block's parent hash. It must cover everything besides the tokens that
  // changes a block's K/V (model, KV dtype, a LoRA adapter...): one cache serves one model
  // and one dtype today, so 0; per-request salts would be mixed in here.
  uint64_t hash_seed = kDefaultBlockHashSeed;
  // Monotonic seconds, for the TTL; steady_clock when empty (tests inject their own).
  std::function<double()> clock = nullptr;
  // Keep every change of the cache's contents for TakeEvents (the engine drains them each
  // step for its KV event stream). Off: nothing is kept, nothing grows.
  bool record_events = false;
};

// One change of the prefix cache's contents: a block became findable under `hash`, or its
// entry went (evicted for new contents, or expired by the TTL).
struct PrefixCacheEvent {
  enum class Kind : uint8_t { kStored, kEvicted };
  Kind kind;
  uint64_t hash;
};

// Counters since start-up (the engine's /metrics).
struct PrefixCacheStats {
  int64_t num_queried_tokens = 0;  // tokens of sequences admitted (again) with a lookup
  int64_t num_hit_tokens = 0;      // of those, served from the cache
  int64_t num_evicted_blocks = 0;  // cached blocks reused for new contents
  int64_t num_expired_blocks = 0;  // cached blocks released by the TTL
};

class KvCacheManager {
 public:
  // `num_blocks` >= 1 blocks of layout.block_size tokens each.
  KvCacheManager(const KvLayout& layout, int32_t num_blocks, PrefixCacheOptions prefix_cache = {});

  int32_t block_size() const { return block_size_; }
  bool prefix_caching() const { return options_.enabled; }
  // Blocks that hold `num_tokens` positions.
  int32_t NumBlocksFor(int64_t num_tokens) const;

  // How many leading tokens of a new sequence with these tokens already have their K/V
  // in the cache, so that they need not be computed. Always a whole number of blocks and
  // less than token_ids.size() (the last token is always computed, for its logits).
  // Without prefix caching: 0. Allocate for a new sequence attaches those blocks.
  int32_t NumCachedTokens(std::span<const int32_t> token_ids) const;

  // Admits `seq` (unknown so far) with one lookup: attaches its cached leading blocks,
  // then allocates room for up to `max_new_tokens` more of `token_ids` (at least one:
  // NumCachedTokens < token_ids.size()). Returns the number of cached tokens, or nullopt
  // and changes nothing when the pool lacks the blocks. With use_prefix_cache false the
  // sequence neither reads the cache (0 cached tokens) nor files its blocks in it.
  [[nodiscard]] std::optional<int32_t> AllocatePrompt(SequenceId seq,
                                                      std::span<const int32_t> token_ids,
                                                      int32_t max_new_tokens,
                                                      bool use_prefix_cache = true);

  // Grows `seq`'s block table to cover positions [0, num_tokens). `token_ids` are the
  // sequence's known tokens (at least num_tokens of them); the K/V of those past the
  // computed ones will be written by the next forward pass. A sequence the manager does
  // not know starts a new table with the cached blocks NumCachedTokens counted. Returns
  // false and changes nothing when the pool lacks the blocks (after evicting every
  // cached block nobody holds): capacity is not an error, the scheduler decides whom
  // to preempt. Blocks that become full are filed for the cache at CommitComputed.
  // num_tokens may exceed token_ids.size() (speculative decoding's draft positions): only
  // blocks full of known tokens are filed, so a cached block never holds unverified ones.
  [[nodiscard]] bool Allocate(SequenceId seq, std::span<const int32_t> token_ids,
                              int32_t num_tokens);

  // The forward pass for everything allocated since the last call has run: the full
  // blocks it wrote become findable. Call before freeing or forking after a pass.
  void CommitComputed();
  // With a TTL: releases cached blocks idle longer than it. Call at step boundaries.
  void ReleaseIdleBlocks();

  // Starts `child` (unknown so far) sharing, by reference count, the blocks of `parent`
  // that positions [0, num_tokens) fill completely. A partly filled last block is not
  // shared: the child recomputes those few tokens into a block of its own, so no block
  // is ever written by two sequences. Returns the number of positions shared (a multiple
  // of block_size): the child's computed tokens. Never needs a free block.
  int32_t Fork(SequenceId parent, SequenceId child, int32_t num_tokens);

  // Drops all of `seq`'s blocks at once; a block returns to the pool when no other
  // sequence shares it (into the LRU when cached). Blocks allocated since the last
  // CommitComputed are never cached (their K/V was not written). Unknown ids are ignored.
  void Free(SequenceId seq);

  // Speculative decoding's rollback: drops `seq`'s blocks past those holding positions
  // [0, num_tokens) -- the K/V of rejected draft tokens. Those blocks were never filed for
  // the cache (a block is filed only once its tokens are the sequence's own), are held by
  // this sequence alone, and return to the free stack. Unknown ids are ignored.
  void Truncate(SequenceId seq, int32_t num_tokens);

  bool Contains(SequenceId seq) const { return tables_.contains(seq); }
  // Block i holds positions [i * block_size, (i + 1) * block_size). Valid until the next
  // Allocate or Free of `seq`. Empty for an unknown sequence.
  std::span<const BlockId> BlockTable(SequenceId seq) const;

  // Free blocks include cached ones that no sequence holds (they are evicted on demand).
  int32_t num_free_blocks() const { return pool_.num_free_blocks(); }
  int32_t num_used_blocks() const { return pool_.num_used_blocks(); }
  int32_t num_total_blocks() const { return pool_.num_total_blocks(); }
  int32_t num_cached_blocks() const { return index_.num_registered(); }
  int32_t num_cached_free_blocks() const { return pool_.num_cached_free_blocks(); }
  int32_t num_sequences() const { return static_cast<int32_t>(tables_.size()); }
  const PrefixCacheStats& stats() const { return stats_; }

  // With record_events: appends the changes since the last call, in the order they
  // happened, to `events`. A hash is stored and evicted alternately, never twice in a row.
  void TakeEvents(std::vector<PrefixCacheEvent>* events);
  bool has_events() const { return !events_.empty(); }

  // For tests, after every step: each block's reference count equals the number of
  // block-table entries naming it, no table names a block twice, free + used == total,
  // the free stack and the LRU hold exactly the free uncached and cached blocks, the
  // hash map and the pool agree on which blocks are cached, and each sequence's chain of
  // prefix ids matches the entries of its cached blocks. Internal error naming the first
  // broken invariant.
  Status CheckInvariants() const;
  // For tests: `seq`'s full blocks hash to what it recorded from `token_ids` (its tokens),
  // and every one of them that the cache names holds exactly those tokens -- a hit implies
  // identical tokens.
  Status CheckTokens(SequenceId seq, std::span<const int32_t> token_ids) const;

 private:
  struct Table {
    std::vector<BlockId> blocks;    // [num_blocks]
    std::vector<uint64_t> hashes;   // [num_full_blocks_filed]: chained hash of block i
    std::vector<PrefixId> prefixes; // [same]: the prefix id of block i's content
    bool cacheable = true;          // false: its blocks are never filed (AllocatePrompt)
  };
  // Counts the leading cached blocks of `token_ids` (at most max_blocks) and, unless
  // `table` is null, appends them with their hashes and prefix ids to it.
  int32_t FindCached(std::span<const int32_t> token_ids, int32_t max_blocks, Table* table) const;
  // Most leading blocks of `token_ids` that may come from the cache: the last token is
  // always computed.
  int32_t MaxCachedBlocks(std::span<const int32_t> token_ids) const;
  // Starts `seq` with the cached blocks in `fresh`, grown to num_tokens; false (nothing
  // changed) when the pool lacks the blocks.
  bool AttachNew(SequenceId seq, Table fresh, std::span<const int32_t> token_ids, int32_t num_tokens);
  // Grows an existing table to num_tokens; false (nothing changed) without room.
  bool Grow(Table& table, std::span<const int32_t> token_ids, int32_t num_tokens);
  std::span<const int32_t> BlockTokens(std::span<const int32_t> token_ids, int32_t index) const;
  BlockId AllocateBlock();
  void FileFullBlocks(Table& table, std::span<const int32_t> token_ids, int32_t num_tokens);
  Status CheckTable(SequenceId seq, const Table& table) const;
  void Record(PrefixCacheEvent::Kind kind, uint64_t hash);
  double Now() const;

  int32_t block_size_;
  PrefixCacheOptions options_;
  BlockPool pool_;
  PrefixIndex index_;
  std::unordered_map<SequenceId, Table> tables_;
  std::vector<double> idle_since_;  // [num_total_blocks]: when a cached block was last freed
  std::vector<BlockId> registered_; // reused by CommitComputed
  std::vector<PrefixCacheEvent> events_;  // since the last TakeEvents (record_events only)
  PrefixCacheStats stats_;
};

}  // namespace surge
