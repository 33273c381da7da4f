#include "tokenizer/bert_text.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>

#include "base/utf8.h"
#include "tokenizer/tokenizer_state.h"

namespace surge {
namespace {

// The Rust crate's table (BERT's original): CJK Unified Ideographs and their extensions,
// and the compatibility ideographs.
bool IsChineseChar(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool IsWhitespace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(static_cast<UChar32>(c));
}

// Rust's char::is_other (Cc, Cf, Cs, Co, Cn), tab and newlines excepted.
bool IsControl(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_C_MASK) != 0;
}

bool IsPunctuation(char32_t c) {
  if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0;
}

class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(const BertNormalizerOptions& options, const icu::Normalizer2* nfd) : options_(options), nfd_(nfd) {}

  std::string Normalize(std::string_view text) const override {
    std::string out;
    out.reserve(text.size() + 8);
    for (size_t pos = 0; pos < text.size();) {
      char32_t c = NextCodePoint(text, &pos);
      if (options_.clean_text) {
        if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
        if (IsWhitespace(c)) c = ' ';
      }
      const bool spaced = options_.handle_chinese_chars && IsChineseChar(c);
      if (spaced) out += ' ';
      AppendUtf8(c, &out);
      if (spaced) out += ' ';
    }
    if (options_.strip_accents) out = StripAccents(out);
    if (options_.lowercase) out = Lowercase(out);
    return out;
  }

 private:
  std::string StripAccents(const std::string& text) const {
    UErrorCode status = U_ZERO_ERROR;
    std::string decomposed;
    icu::StringByteSink<std::string> sink(&decomposed, static_cast<int32_t>(text.size()));
    nfd_->normalizeUTF8(0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink, nullptr, status);
    if (U_FAILURE(status)) decomposed = text;
    std::string out;
    out.reserve(decomposed.size());
    for (size_t pos = 0; pos < decomposed.size();) {
      const char32_t c = NextCodePoint(decomposed, &pos);
      if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) AppendUtf8(c, &out);
    }
    return out;
  }

  // Rust's char::to_lowercase: the full mapping differs from the simple one only for
  // U+0130 (İ -> i + combining dot above).
  static std::string Lowercase(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
      const char32_t c = NextCodePoint(text, &pos);
      if (c == 0x130) {
        out += "i\xCC\x87";
        continue;
      }
      AppendUtf8(static_cast<char32_t>(u_tolower(static_cast<UChar32>(c))), &out);
    }
    return out;
  }

  const BertNormalizerOptions options_;
  const icu::Normalizer2* nfd_;  // owned by ICU
};

class BertPreTokenizer final : public PreTokenizer {
 public:
  void Split(std::string_view piece, int, std::vector<std::string>* out) const override {
    std::string word;
    for (size_t pos = 0; pos < piece.size();) {
      const size_t start = pos;
      const char32_t c = NextCodePoint(piece, &pos);
      const bool space = IsWhitespace(c);
      if (!space && !IsPunctuation(c)) {
        word.append(piece.substr(start, pos - start));
        continue;
      }
      if (!word.empty()) out->push_back(std::move(word));
      word.clear();
      if (!space) out->emplace_back(piece.substr(start, pos - start));
    }
    if (!word.empty()) out->push_back(std::move(word));
  }
};

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void DecodeChain(std::vector<std::string>* tokens, bool*) const override {
    for (size_t i = 0; i < tokens->size(); ++i) {
      std::string& token = (*tokens)[i];
      if (i > 0) {
        if (!prefix_.empty() && token.starts_with(prefix_)) {
          token.erase(0, prefix_.size());
        } else {
          token.insert(token.begin(), ' ');
        }
      }
      if (cleanup_) token = CleanUpTokenizationSpaces(token);
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

}  // namespace

StatusOr<std::unique_ptr<Normalizer>> MakeBertNormalizer(const BertNormalizerOptions& options) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status) || nfd == nullptr) {
    return InternalError(std::string("ICU normalizer unavailable: ") + u_errorName(status));
  }
  return std::unique_ptr<Normalizer>(std::make_unique<BertNormalizer>(options, nfd));
}

std::unique_ptr<PreTokenizer> MakeBertPreTokenizer() { return std::make_unique<BertPreTokenizer>(); }

std::unique_ptr<Decoder> MakeWordPieceDecoder(std::string prefix, bool cleanup) {
  return std::make_unique<WordPieceDecoder>(std::move(prefix), cleanup);
}

}  // namespace surge
