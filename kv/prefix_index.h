// PrefixIndex: the prefix cache's directory. It maps the chained hash of a full block
// (hash of the parent block's hash and the block's token ids) to the one block holding that
// content, and keeps each entry's tokens and its parent's entry id, so that a hit is
// verified exactly: a hit means the same tokens after the same parent entry, hence by
// induction the same whole prefix -- a hash collision can only cost a miss.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/block_hash.h"
#include "kv/kv_layout.h"

namespace surge {

// Identifies one registered content (a prefix ending with a full block). Never reused; 0
// is the empty prefix, the parent of every first block.
enum class PrefixId : uint64_t {};
inline constexpr PrefixId kRootPrefix{0};

class PrefixIndex {
 public:
  PrefixIndex(int32_t num_blocks, int32_t block_size);

  // The chained hash of a block of `block_size` tokens after a parent with `parent_hash`
  // (the first block's parent hash is the cache's seed): base/block_hash.h, which routers
  // share to compute the same hashes.
  static uint64_t Hash(uint64_t parent_hash, std::span<const int32_t> tokens) {
    return BlockHash(parent_hash, tokens);
  }

  // The registered block whose content is `tokens` after parent entry `parent`, filed
  // under `hash`; nullopt when there is none (a miss, or a colliding entry).
  std::optional<BlockId> Find(uint64_t hash, PrefixId parent, std::span<const int32_t> tokens) const;

  // A block whose K/V the next forward pass writes: it gets an id (returned) and its
  // content now, and becomes findable at Commit. `tokens` has block_size ids.
  PrefixId AddPending(BlockId block, uint64_t hash, PrefixId parent, std::span<const int32_t> tokens);
  // The pending block's K/V was never written (its sequence left the plan): forget it.
  void DiscardPending(BlockId block);
  // The forward pass ran: pending blocks are registered, except those whose hash another
  // block already holds (a duplicate computed concurrently stays uncached). Appends each
  // newly registered block to `registered`.
  void Commit(std::vector<BlockId>* registered);
  // Drops a registered block's entry (eviction or expiry).
  void Erase(BlockId block);

  bool registered(BlockId block) const { return entries_[block].state == State::kRegistered; }
  bool pending(BlockId block) const { return entries_[block].state == State::kPending; }
  PrefixId id(BlockId block) const { return entries_[block].id; }
  uint64_t hash(BlockId block) const { return entries_[block].hash; }
  PrefixId parent(BlockId block) const { return entries_[block].parent; }
  // [block_size] the block's token ids (pending or registered blocks).
  std::span<const int32_t> tokens(BlockId block) const;
  int32_t num_registered() const { return static_cast<int32_t>(by_hash_.size()); }

  // For tests: the hash map and the entries agree, ids are unique. "" or the problem.
  std::string CheckInvariants() const;

 private:
  enum class State : uint8_t { kNone, kPending, kRegistered };
  struct Entry {
    State state = State::kNone;
    uint64_t hash = 0;
    PrefixId id{};
    PrefixId parent = kRootPrefix;
  };

  const int32_t block_size_;
  std::vector<Entry> entries_;    // [num_blocks]
  std::vector<int32_t> tokens_;   // [num_blocks, block_size]: each entry's token ids
  std::unordered_map<uint64_t, BlockId> by_hash_;  // registered blocks only
  std::vector<BlockId> pending_;  // blocks made pending since the last Commit (may repeat)
  uint64_t next_id_ = 1;  // the next PrefixId
};

}  // namespace surge
