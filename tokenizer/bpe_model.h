// BpeModel: byte-pair encoding of pre-tokenized words with a merge-rank table, a
// priority-queue merge loop and a word -> ids cache.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "tokenizer/token_model.h"
#include "tokenizer/vocab.h"

namespace surge {

struct BpeOptions {
  std::optional<int32_t> unk_id;  // emitted for characters the vocabulary lacks
  bool fuse_unk = false;          // consecutive unknowns become one unk
  bool byte_fallback = false;     // unknown characters become <0xNN> tokens
  bool ignore_merges = false;     // a word that is a token is emitted whole
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

// Merge rank and result of one (left id, right id) pair, in an open-addressing table.
class MergeTable {
 public:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  void Reserve(size_t num_merges);
  // A later duplicate replaces an earlier one (as in both reference implementations).
  void Insert(int32_t left, int32_t right, Merge merge);
  const Merge* Find(int32_t left, int32_t right) const;
  size_t size() const { return num_entries_; }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    Merge merge{};
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t Key(int32_t left, int32_t right) {
    return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
  }
  size_t SlotFor(uint64_t key) const;
  void Grow();

  std::vector<Slot> slots_;  // [capacity], a power of two
  size_t num_entries_ = 0;
};

// Word -> ids cache, sharded so that concurrent Encode calls rarely contend.
class WordCache {
 public:
  bool Lookup(std::string_view word, std::vector<int32_t>* ids) const;
  void Insert(std::string_view word, std::span<const int32_t> ids) const;

  static constexpr size_t kMaxWordBytes = 256;   // longer words are not cached
  static constexpr size_t kMaxEntriesPerShard = 16384;

 private:
  struct Shard {
    std::mutex mutex;
    StringMap<std::vector<int32_t>> map;
  };
  static constexpr size_t kNumShards = 16;
  mutable std::array<Shard, kNumShards> shards_;
};

class BpeModel final : public TokenModel {
 public:
  // `vocab` (token -> id, added tokens included) must outlive the model. Merges whose parts
  // or result are not in the vocabulary can never apply and are dropped; their number is
  // reported in `num_dropped_merges`.
  static StatusOr<std::unique_ptr<BpeModel>> Create(
      const Vocab* vocab, const std::vector<std::pair<std::string, std::string>>& merges,
      BpeOptions options, int* num_dropped_merges);
  // SentencePiece-style BPE as llama.cpp runs it for "llama" GGUF vocabularies: any two
  // adjacent symbols whose concatenation is a token may merge, the highest-scoring result
  // first and, among equal scores, the leftmost pair. `scores` is [vocab->size()].
  static std::unique_ptr<BpeModel> CreateFromScores(const Vocab* vocab, std::span<const float> scores,
                                                    BpeOptions options);

  // Appends the ids of `words` (pre-tokens, valid UTF-8). With fuse_unk, runs of unk ids
  // across the whole call collapse into one (tokenizers.js fuses per model call).
  void Encode(const std::vector<std::string>& words, std::vector<int32_t>* ids) const override;

 private:
  BpeModel(const Vocab* vocab, BpeOptions options);
  // One word through the cache (and, when safe, split at metaspace word starts).
  void EncodeCached(std::string_view word, std::vector<int32_t>* ids) const;
  // One word through the merge loop.
  void EncodeWord(std::string_view word, std::vector<int32_t>* ids) const;
  // Ids of the unknown character `text`: <0xNN> tokens, else unk, else nothing.
  void AppendUnknown(std::string_view text, std::vector<int32_t>* ids) const;
  std::optional<int32_t> SymbolId(std::string_view word, size_t begin, size_t end) const;
  bool ComputeMetaspaceSplitSafe() const;

  const Vocab* vocab_;
  BpeOptions options_;
  MergeTable merges_;
  std::array<int32_t, 256> byte_fallback_ids_;  // id of <0xNN>, -1 when missing
  // True when no token holds "▁" after a non-"▁" character, so that a word can be cut
  // before every "▁" that follows another character without changing the result.
  bool metaspace_split_safe_ = false;
  WordCache cache_;
};

}  // namespace surge
