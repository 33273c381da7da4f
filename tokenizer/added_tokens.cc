#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <iterator>
#include <map>

#include <unicode/uchar.h>

#include "base/utf8.h"

namespace surge {
namespace {

bool IsWordChar(char32_t cp) {
  return cp == '_' || u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_ALPHABETIC) ||
         u_isdigit(static_cast<UChar32>(cp));
}

// The code point that ends just before `pos`.
char32_t CodePointBefore(std::string_view text, size_t pos) {
  size_t start = pos - 1;
  while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
  return NextCodePoint(text, &start);
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(
    const std::vector<std::pair<std::string, const AddedToken*>>& entries, AddedTokenOrder order)
    : order_(order), nodes_(1) {
  for (const auto& [text, token] : entries) {
    if (text.empty()) continue;
    int32_t node = 0;
    for (char c : text) {
      const auto byte = static_cast<uint8_t>(c);
      int32_t child = Child(node, byte);
      if (child < 0) {
        child = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
        auto& children = nodes_[node].children;
        children.insert(std::lower_bound(children.begin(), children.end(), std::make_pair(byte, int32_t{0})),
                        {byte, child});
      }
      node = child;
    }
    nodes_[node].token = token;  // a later duplicate wins, as in a JS Map
    first_byte_[static_cast<uint8_t>(text[0])] = true;
  }
}

int32_t AddedTokenMatcher::Child(int32_t node, uint8_t byte) const {
  const auto& children = nodes_[node].children;
  auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, int32_t{0}));
  return it != children.end() && it->first == byte ? it->second : -1;
}

std::pair<const AddedToken*, size_t> AddedTokenMatcher::MatchAt(std::string_view text, size_t pos) const {
  std::pair<const AddedToken*, size_t> best = {nullptr, 0};
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    node = Child(node, static_cast<uint8_t>(text[i]));
    if (node < 0) break;
    const AddedToken* token = nodes_[node].token;
    if (token == nullptr) continue;
    if (token->single_word) {
      bool word_before = pos > 0 && IsWordChar(CodePointBefore(text, pos));
      size_t after = i + 1;
      bool word_after = after < text.size() && IsWordChar(NextCodePoint(text, &after));
      if (word_before || word_after) continue;
    }
    best = {token, i + 1 - pos};
  }
  return best;
}

void AddedTokenMatcher::SplitLeftmostLongest(std::string_view text, std::vector<Section>* sections) const {
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    if (!first_byte_[static_cast<uint8_t>(text[pos])]) {
      ++pos;
      continue;
    }
    auto [token, length] = MatchAt(text, pos);
    if (token == nullptr) {
      ++pos;
      continue;
    }
    if (pos > start) sections->push_back({text.substr(start, pos - start), nullptr});
    sections->push_back({text.substr(pos, length), token});
    pos += length;
    start = pos;
  }
  if (start < text.size()) sections->push_back({text.substr(start), nullptr});
}

void AddedTokenMatcher::SplitLongestFirst(std::string_view text, std::vector<Section>* sections) const {
  struct Occurrence {
    size_t pos;
    size_t length;
    const AddedToken* token;
  };
  std::vector<Occurrence> occurrences;  // every token at every position
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (!first_byte_[static_cast<uint8_t>(text[pos])]) continue;
    int32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      node = Child(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      if (nodes_[node].token != nullptr) occurrences.push_back({pos, i + 1 - pos, nodes_[node].token});
    }
  }
  // llama.cpp's order: longer tokens first; one token's occurrences left to right.
  std::sort(occurrences.begin(), occurrences.end(), [](const Occurrence& a, const Occurrence& b) {
    if (a.length != b.length) return a.length > b.length;
    return a.token->id != b.token->id ? a.token->id < b.token->id : a.pos < b.pos;
  });
  std::map<size_t, Occurrence> taken;  // by position; never overlapping
  for (const Occurrence& occurrence : occurrences) {
    auto next = taken.lower_bound(occurrence.pos);
    if (next != taken.end() && next->first < occurrence.pos + occurrence.length) continue;
    if (next != taken.begin() && std::prev(next)->first + std::prev(next)->second.length > occurrence.pos) continue;
    taken.emplace(occurrence.pos, occurrence);
  }
  size_t start = 0;
  for (const auto& [pos, occurrence] : taken) {
    if (pos > start) sections->push_back({text.substr(start, pos - start), nullptr});
    sections->push_back({text.substr(pos, occurrence.length), occurrence.token});
    start = pos + occurrence.length;
  }
  if (start < text.size()) sections->push_back({text.substr(start), nullptr});
}

void AddedTokenMatcher::Split(std::string_view text, std::vector<Section>* sections) const {
  const size_t first = sections->size();
  if (order_ == AddedTokenOrder::kLongestFirst) {
    SplitLongestFirst(text, sections);
  } else {
    SplitLeftmostLongest(text, sections);
  }
  for (size_t i = first; i < sections->size(); ++i) {
    const AddedToken* token = (*sections)[i].token;
    if (token == nullptr) continue;
    if (token->lstrip && i > first && (*sections)[i - 1].token == nullptr) {
      (*sections)[i - 1].text = TrimJsWhitespaceEnd((*sections)[i - 1].text);
    }
    if (token->rstrip && i + 1 < sections->size() && (*sections)[i + 1].token == nullptr) {
      (*sections)[i + 1].text = TrimJsWhitespaceStart((*sections)[i + 1].text);
    }
  }
}

}  // namespace surge
