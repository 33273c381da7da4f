#include "kv/prefix_index.h"

#include <algorithm>
#include <unordered_set>

#include "base/check.h"

namespace surge {
PrefixIndex::PrefixIndex(int32_t num_blocks, int32_t block_size)
    : block_size_(block_size),
      entries_(num_blocks),
      tokens_(static_cast<size_t>(num_blocks) * block_size, 0) {
  by_hash_.reserve(num_blocks);
}

std::span<const int32_t> PrefixIndex::tokens(BlockId block) const {
  return std::span<const int32_t>(tokens_).subspan(static_cast<size_t>(block) * block_size_, block_size_);
}

std::optional<BlockId> PrefixIndex::Find(uint64_t hash, PrefixId parent,
                                         std::span<const int32_t> tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const BlockId block = it->second;
  if (entries_[block].parent != parent) return std::nullopt;
  const std::span<const int32_t> stored = this->tokens(block);
  if (!std::equal(stored.begin(), stored.end(), tokens.begin(), tokens.end())) return std::nullopt;
  return block;
}

PrefixId PrefixIndex::AddPending(BlockId block, uint64_t hash, PrefixId parent,
                                 std::span<const int32_t> tokens) {
  CHECK(entries_[block].state == State::kNone) << "block " << block << " is already in the index";
  CHECK_EQ(static_cast<int32_t>(tokens.size()), block_size_);
  entries_[block] = {State::kPending, hash, PrefixId{next_id_++}, parent};
  std::copy(tokens.begin(), tokens.end(), tokens_.begin() + static_cast<ptrdiff_t>(block) * block_size_);
  pending_.push_back(block);
  return entries_[block].id;
}

void PrefixIndex::DiscardPending(BlockId block) {
  CHECK(pending(block)) << "block " << block << " is not pending";
  entries_[block].state = State::kNone;  // its stale pending_ slot is skipped at Commit
}

void PrefixIndex::Commit(std::vector<BlockId>* registered) {
  for (BlockId block : pending_) {
    Entry& entry = entries_[block];
    if (entry.state != State::kPending) continue;  // discarded (and maybe reused) since
    if (by_hash_.emplace(entry.hash, block).second) {
      entry.state = State::kRegistered;
      registered->push_back(block);
    } else {
      entry.state = State::kNone;
    }
  }
  pending_.clear();
}

void PrefixIndex::Erase(BlockId block) {
  CHECK(registered(block)) << "block " << block << " is not registered";
  by_hash_.erase(entries_[block].hash);
  entries_[block].state = State::kNone;
}

std::string PrefixIndex::CheckInvariants() const {
  std::unordered_set<PrefixId> ids;
  int32_t num_registered = 0;
  for (BlockId block = 0; block < static_cast<BlockId>(entries_.size()); ++block) {
    const Entry& entry = entries_[block];
    if (entry.state == State::kNone) continue;
    if (entry.id == kRootPrefix || static_cast<uint64_t>(entry.id) >= next_id_ || !ids.insert(entry.id).second) {
      return "block " + std::to_string(block) + " has a bad or duplicate prefix id";
    }
    if (entry.state != State::kRegistered) continue;
    ++num_registered;
    auto it = by_hash_.find(entry.hash);
    if (it == by_hash_.end() || it->second != block) {
      return "registered block " + std::to_string(block) + " is not in the hash map";
    }
  }
  if (static_cast<size_t>(num_registered) != by_hash_.size()) return "hash map names unregistered blocks";
  return "";
}

}  // namespace surge
