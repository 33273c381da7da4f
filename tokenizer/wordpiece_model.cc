#include "tokenizer/wordpiece_model.h"

#include "base/utf8.h"

namespace surge {
namespace {

size_t NumCodePoints(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return count;
}

// Bytes of the last UTF-8 character of non-empty `text`.
size_t LastCharBytes(std::string_view text) {
  size_t n = 1;
  while (n < text.size() && (static_cast<uint8_t>(text[text.size() - n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace

void WordPieceModel::Encode(const std::vector<std::string>& words, std::vector<int32_t>* ids) const {
  for (const std::string& word : words) EncodeWord(word, ids);
}

void WordPieceModel::EncodeWord(std::string_view word, std::vector<int32_t>* ids) const {
  if (word.empty()) return;
  if (NumCodePoints(word) > static_cast<size_t>(options_.max_input_chars_per_word)) {
    ids->push_back(options_.unk_id);
    return;
  }
  const size_t first = ids->size();
  std::string piece;
  for (size_t start = 0; start < word.size();) {
    size_t end = word.size();
    std::optional<int32_t> id;
    while (start < end) {
      std::string_view text = word.substr(start, end - start);
      piece.assign(start > 0 ? options_.continuing_subword_prefix : std::string());
      piece.append(text);
      if ((id = vocab_->Find(piece))) break;
      end -= LastCharBytes(text);
    }
    if (!id) {  // no piece starts here: the whole word is unknown
      ids->resize(first);
      ids->push_back(options_.unk_id);
      return;
    }
    ids->push_back(*id);
    start = end;
  }
}

}  // namespace surge
