#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/utf8.h"

namespace surge {
namespace {

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581 "▁"

// One symbol of a word during merging; symbols form a doubly linked list in a vector.
struct Symbol {
  int32_t id;    // token id; kUnknown for a character outside the vocabulary; kDead once merged away
  int32_t prev;  // index of the previous live symbol, -1 at the start
  int32_t next;  // index of the next live symbol, -1 at the end
  uint32_t begin;
  uint32_t end;  // byte range of the word this symbol covers
};
constexpr int32_t kUnknown = -1;
constexpr int32_t kDead = -2;

// A possible merge of the symbol at `pos` with its right neighbour. Lowest rank first,
// then leftmost: the order both reference implementations apply merges in.
struct Candidate {
  int32_t rank;
  int32_t pos;
  bool operator>(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

// Applies merges to the linked symbols until none applies: lowest rank first, then
// leftmost. Stale heap entries (a neighbour merged since) are skipped when popped.
void MergeSymbols(const MergeTable& merges, std::vector<Symbol>* symbols_ptr) {
  std::vector<Symbol>& symbols = *symbols_ptr;
  thread_local std::vector<Candidate> heap;
  heap.clear();
  auto consider = [&](int32_t left) {
    const int32_t right = symbols[left].next;
    if (right < 0 || symbols[left].id < 0 || symbols[right].id < 0) return;
    if (const MergeTable::Merge* merge = merges.Find(symbols[left].id, symbols[right].id)) {
      heap.push_back({merge->rank, left});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) consider(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.pos];
    if (left.id < 0 || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    const MergeTable::Merge* merge = right.id < 0 ? nullptr : merges.Find(left.id, right.id);
    if (merge == nullptr || merge->rank != top.rank) continue;  // stale
    left.id = merge->merged_id;
    left.end = right.end;
    left.next = right.next;
    right.id = kDead;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
}

// The first offset > 0 where "▁" follows a character other than "▁", or npos.
size_t NextMetaspaceCut(std::string_view word) {
  const size_t width = kMetaspace.size();
  size_t pos = word.find(kMetaspace, 1);
  while (pos != std::string_view::npos && pos >= width &&
         word.compare(pos - width, width, kMetaspace) == 0) {
    pos = word.find(kMetaspace, pos + width);
  }
  return pos;
}

}  // namespace

void MergeTable::Reserve(size_t num_merges) {
  size_t capacity = 16;
  while (capacity < num_merges * 2) capacity *= 2;
  slots_.assign(capacity, Slot{});
  num_entries_ = 0;
}

size_t MergeTable::SlotFor(uint64_t key) const {
  const size_t mask = slots_.size() - 1;
  size_t slot = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  while (slots_[slot].key != kEmpty && slots_[slot].key != key) slot = (slot + 1) & mask;
  return slot;
}

void MergeTable::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{});
  for (const Slot& slot : old) {
    if (slot.key != kEmpty) slots_[SlotFor(slot.key)] = slot;
  }
}

void MergeTable::Insert(int32_t left, int32_t right, Merge merge) {
  if (slots_.empty()) Reserve(16);
  if ((num_entries_ + 1) * 2 > slots_.size()) Grow();
  uint64_t key = Key(left, right);
  Slot& slot = slots_[SlotFor(key)];
  if (slot.key == kEmpty) ++num_entries_;
  slot.key = key;
  slot.merge = merge;
}

const MergeTable::Merge* MergeTable::Find(int32_t left, int32_t right) const {
  if (slots_.empty()) return nullptr;
  const Slot& slot = slots_[SlotFor(Key(left, right))];
  return slot.key == kEmpty ? nullptr : &slot.merge;
}

bool WordCache::Lookup(std::string_view word, std::vector<int32_t>* ids) const {
  Shard& shard = shards_[StringHash()(word) % kNumShards];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.map.find(word);
  if (it == shard.map.end()) return false;
  ids->insert(ids->end(), it->second.begin(), it->second.end());
  return true;
}

void WordCache::Insert(std::string_view word, std::span<const int32_t> ids) const {
  Shard& shard = shards_[StringHash()(word) % kNumShards];
  std::lock_guard<std::mutex> lock(shard.mutex);
  // A full shard starts over: cheaper than LRU bookkeeping, and hot words return at once.
  if (shard.map.size() >= kMaxEntriesPerShard) shard.map.clear();
  shard.map.emplace(std::string(word), std::vector<int32_t>(ids.begin(), ids.end()));
}

BpeModel::BpeModel(const Vocab* vocab, BpeOptions options)
    : vocab_(vocab), options_(std::move(options)) {
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    byte_fallback_ids_[byte] = vocab_->Find(name).value_or(-1);
  }
}

StatusOr<std::unique_ptr<BpeModel>> BpeModel::Create(
    const Vocab* vocab, const std::vector<std::pair<std::string, std::string>>& merges,
    BpeOptions options, int* num_dropped_merges) {
  std::unique_ptr<BpeModel> model(new BpeModel(vocab, std::move(options)));
  const std::string& prefix = model->options_.continuing_subword_prefix;
  model->merges_.Reserve(merges.size());
  *num_dropped_merges = 0;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    // As in the Rust crate, the right part's continuing-subword prefix is not repeated.
    std::string_view right_body = right;
    if (!prefix.empty() && right_body.starts_with(prefix)) right_body.remove_prefix(prefix.size());
    auto left_id = vocab->Find(left);
    auto right_id = vocab->Find(right);
    auto merged_id = vocab->Find(left + std::string(right_body));
    if (!left_id || !right_id || !merged_id) {
      ++*num_dropped_merges;
      continue;
    }
    model->merges_.Insert(*left_id, *right_id, {static_cast<int32_t>(rank), *merged_id});
  }
  model->metaspace_split_safe_ = model->ComputeMetaspaceSplitSafe();
  return model;
}

std::unique_ptr<BpeModel> BpeModel::CreateFromScores(const Vocab* vocab, std::span<const float> scores,
                                                     BpeOptions options) {
  std::unique_ptr<BpeModel> model(new BpeModel(vocab, std::move(options)));
  // Dense rank of each distinct score, highest first, so that equal scores tie and the
  // merge loop falls back to the leftmost pair (llama.cpp's llm_bigram_spm order).
  std::vector<float> distinct;
  for (float score : scores) distinct.push_back(std::isnan(score) ? -INFINITY : score);
  std::sort(distinct.begin(), distinct.end(), std::greater<>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  auto rank_of = [&](float score) {
    if (std::isnan(score)) score = -INFINITY;
    return static_cast<int32_t>(std::lower_bound(distinct.begin(), distinct.end(), score, std::greater<>()) -
                                distinct.begin());
  };
  model->merges_.Reserve(vocab->token_to_id.size() * 2);
  for (int32_t id = 0; id < vocab->size() && id < static_cast<int32_t>(scores.size()); ++id) {
    if (!vocab->has_token[id]) continue;
    const std::string& token = vocab->id_to_token[id];
    if (token.empty()) continue;
    const int32_t rank = rank_of(scores[id]);
    // Every cut of the token at a character boundary into two tokens is a merge.
    for (size_t cut = Utf8SequenceLength(static_cast<uint8_t>(token[0])); cut < token.size();
         cut += Utf8SequenceLength(static_cast<uint8_t>(token[cut]))) {
      auto left = vocab->Find(std::string_view(token).substr(0, cut));
      auto right = vocab->Find(std::string_view(token).substr(cut));
      if (left && right) model->merges_.Insert(*left, *right, {rank, id});
    }
  }
  model->metaspace_split_safe_ = model->ComputeMetaspaceSplitSafe();
  return model;
}

bool BpeModel::ComputeMetaspaceSplitSafe() const {
  if (options_.ignore_merges || !options_.continuing_subword_prefix.empty() ||
      !options_.end_of_word_suffix.empty()) {
    return false;
  }
  for (const auto& [token, id] : vocab_->token_to_id) {
    size_t pos = token.find(kMetaspace, 1);
    if (pos == std::string::npos) continue;
    for (size_t i = 0; i < token.size(); i += kMetaspace.size()) {
      if (token.compare(i, kMetaspace.size(), kMetaspace) != 0) return false;
    }
  }
  return true;
}

void BpeModel::Encode(const std::vector<std::string>& words, std::vector<int32_t>* ids) const {
  const size_t first = ids->size();
  for (const std::string& word : words) {
    if (!metaspace_split_safe_) {
      EncodeCached(word, ids);
      continue;
    }
    // Cut before each "▁" that follows another character: no token spans such a cut.
    std::string_view rest = word;
    while (!rest.empty()) {
      size_t cut = NextMetaspaceCut(rest);
      EncodeCached(rest.substr(0, cut), ids);
      rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut);
    }
  }
  if (options_.fuse_unk && options_.unk_id) {
    const int32_t unk = *options_.unk_id;
    auto fused_end = std::unique(ids->begin() + first, ids->end(),
                                 [unk](int32_t a, int32_t b) { return a == unk && b == unk; });
    ids->erase(fused_end, ids->end());
  }
}

void BpeModel::EncodeCached(std::string_view word, std::vector<int32_t>* ids) const {
  if (word.empty()) return;
  if (word.size() > WordCache::kMaxWordBytes) {
    EncodeWord(word, ids);
    return;
  }
  if (cache_.Lookup(word, ids)) return;
  const size_t first = ids->size();
  EncodeWord(word, ids);
  cache_.Insert(word, std::span<const int32_t>(ids->data() + first, ids->size() - first));
}

std::optional<int32_t> BpeModel::SymbolId(std::string_view word, size_t begin, size_t end) const {
  const bool prefixed = begin > 0 && !options_.continuing_subword_prefix.empty();
  const bool suffixed = end == word.size() && !options_.end_of_word_suffix.empty();
  if (!prefixed && !suffixed) return vocab_->Find(word.substr(begin, end - begin));
  std::string symbol = prefixed ? options_.continuing_subword_prefix : "";
  symbol.append(word.substr(begin, end - begin));
  if (suffixed) symbol += options_.end_of_word_suffix;
  return vocab_->Find(symbol);
}

void BpeModel::AppendUnknown(std::string_view text, std::vector<int32_t>* ids) const {
  if (options_.byte_fallback) {
    bool all_bytes_known = true;
    for (char byte : text) all_bytes_known &= byte_fallback_ids_[static_cast<uint8_t>(byte)] >= 0;
    if (all_bytes_known) {
      for (char byte : text) ids->push_back(byte_fallback_ids_[static_cast<uint8_t>(byte)]);
      return;
    }
  }
  if (options_.unk_id) ids->push_back(*options_.unk_id);
}

void BpeModel::EncodeWord(std::string_view word, std::vector<int32_t>* ids) const {
  if (options_.ignore_merges) {
    if (auto id = vocab_->Find(word)) {
      ids->push_back(*id);
      return;
    }
  }
  thread_local std::vector<Symbol> symbols;
  symbols.clear();
  for (size_t pos = 0; pos < word.size();) {
    size_t end = std::min(word.size(), pos + Utf8SequenceLength(static_cast<uint8_t>(word[pos])));
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({SymbolId(word, pos, end).value_or(kUnknown), index - 1, index + 1,
                       static_cast<uint32_t>(pos), static_cast<uint32_t>(end)});
    pos = end;
  }
  symbols.back().next = -1;
  MergeSymbols(merges_, &symbols);
  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    const Symbol& symbol = symbols[i];
    if (symbol.id >= 0) {
      ids->push_back(symbol.id);
    } else {
      AppendUnknown(word.substr(symbol.begin, symbol.end - symbol.begin), ids);
    }
  }
}

}  // namespace surge
