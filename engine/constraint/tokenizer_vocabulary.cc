#include "engine/constraint/tokenizer_vocabulary.h"

#include "base/utf8.h"
#include "tokenizer/byte_level.h"

namespace surge {
namespace {

// GPT-2 byte-level text back to bytes; nullopt when some character is not one of the 256
// (then the token is an added token whose content is literal text).
std::optional<std::string> FromByteLevel(std::string_view token) {
  if (!IsValidUtf8(token)) return std::nullopt;
  std::string out;
  for (size_t pos = 0; pos < token.size();) {
    int byte = UnicodeToByte(NextCodePoint(token, &pos));
    if (byte < 0) return std::nullopt;
    out.push_back(static_cast<char>(byte));
  }
  return out;
}

// "<0x0A>" -> "\n"; "▁" -> " " elsewhere.
std::string FromSentencePiece(std::string_view token) {
  if (token.size() == 6 && token.substr(0, 3) == "<0x" && token[5] == '>') {
    return std::string(1, static_cast<char>(std::stoi(std::string(token.substr(3, 2)), nullptr, 16)));
  }
  static constexpr std::string_view kSpace = "\xE2\x96\x81";
  std::string out;
  for (size_t pos = 0; pos < token.size();) {
    if (token.substr(pos, kSpace.size()) == kSpace) {
      out.push_back(' ');
      pos += kSpace.size();
    } else {
      out.push_back(token[pos++]);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> TokenBytesOf(const Tokenizer& tokenizer) {
  // Byte-level vocabularies hold the byte-level character of space, 'Ġ' (U+0120).
  const bool byte_level = tokenizer.TokenToId("\xC4\xA0").has_value();
  std::vector<std::string> bytes(tokenizer.vocab_size());
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    std::optional<std::string_view> token = tokenizer.IdToToken(id);
    if (!token || tokenizer.IsSpecial(id)) continue;
    if (!byte_level) {
      bytes[id] = FromSentencePiece(*token);
      continue;
    }
    std::optional<std::string> decoded = FromByteLevel(*token);
    bytes[id] = decoded ? *decoded : std::string(*token);
  }
  return bytes;
}

TokenVocabulary MakeTokenVocabulary(const Tokenizer& tokenizer) {
  std::vector<uint8_t> excluded(tokenizer.vocab_size(), 0);
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) excluded[id] = tokenizer.IsSpecial(id);
  return TokenVocabulary(TokenBytesOf(tokenizer), excluded, tokenizer.eos_token_ids());
}

}  // namespace surge
