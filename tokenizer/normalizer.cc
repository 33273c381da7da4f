#include "tokenizer/normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "base/utf8.h"

namespace surge {
namespace {

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  std::string Normalize(std::string_view text) const override {
    std::string out(text);
    for (const auto& step : steps_) out = step->Normalize(out);
    return out;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prepend) : prepend_(std::move(prepend)) {}
  // Empty input stays empty (the Rust crate's rule; the tokenizer never passes empty text).
  std::string Normalize(std::string_view text) const override {
    return text.empty() ? std::string() : prepend_ + std::string(text);
  }

 private:
  std::string prepend_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string Normalize(std::string_view text) const override {
    return pattern_.ReplaceAll(text, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(const icu::Normalizer2* normalizer) : normalizer_(normalizer) {}
  std::string Normalize(std::string_view text) const override {
    UErrorCode status = U_ZERO_ERROR;
    icu::StringPiece input(text.data(), static_cast<int32_t>(text.size()));
    if (normalizer_->isNormalizedUTF8(input, status) && U_SUCCESS(status)) return std::string(text);
    std::string out;
    icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
    status = U_ZERO_ERROR;
    normalizer_->normalizeUTF8(0, input, sink, nullptr, status);
    return U_SUCCESS(status) ? out : std::string(text);
  }

 private:
  const icu::Normalizer2* normalizer_;  // owned by ICU
};

class LowercaseNormalizer : public Normalizer {
 public:
  std::string Normalize(std::string_view text) const override {
    icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    std::string out;
    unicode.toLower(icu::Locale::getRoot()).toUTF8String(out);
    return out;
  }
};

class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string Normalize(std::string_view text) const override {
    if (left_) text = TrimJsWhitespaceStart(text);
    if (right_) text = TrimJsWhitespaceEnd(text);
    return std::string(text);
  }

 private:
  bool left_;
  bool right_;
};

class StripAccentsNormalizer : public Normalizer {
 public:
  std::string Normalize(std::string_view text) const override {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
      size_t start = pos;
      char32_t cp = NextCodePoint(text, &pos);
      if (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_M_MASK) continue;
      out.append(text.substr(start, pos - start));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Normalizer> MakeSequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) {
  return std::make_unique<SequenceNormalizer>(std::move(steps));
}

std::unique_ptr<Normalizer> MakePrependNormalizer(std::string prepend) {
  return std::make_unique<PrependNormalizer>(std::move(prepend));
}

std::unique_ptr<Normalizer> MakeReplaceNormalizer(Pattern pattern, std::string content) {
  return std::make_unique<ReplaceNormalizer>(std::move(pattern), std::move(content));
}

StatusOr<std::unique_ptr<Normalizer>> MakeUnicodeNormalizer(UnicodeForm form) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = nullptr;
  switch (form) {
    case UnicodeForm::kNfc: normalizer = icu::Normalizer2::getNFCInstance(status); break;
    case UnicodeForm::kNfd: normalizer = icu::Normalizer2::getNFDInstance(status); break;
    case UnicodeForm::kNfkc: normalizer = icu::Normalizer2::getNFKCInstance(status); break;
    case UnicodeForm::kNfkd: normalizer = icu::Normalizer2::getNFKDInstance(status); break;
  }
  if (U_FAILURE(status) || normalizer == nullptr) {
    return InternalError(std::string("ICU normalizer unavailable: ") + u_errorName(status));
  }
  return std::unique_ptr<Normalizer>(std::make_unique<UnicodeNormalizer>(normalizer));
}

std::unique_ptr<Normalizer> MakeLowercaseNormalizer() {
  return std::make_unique<LowercaseNormalizer>();
}

std::unique_ptr<Normalizer> MakeStripNormalizer(bool left, bool right) {
  return std::make_unique<StripNormalizer>(left, right);
}

std::unique_ptr<Normalizer> MakeStripAccentsNormalizer() {
  return std::make_unique<StripAccentsNormalizer>();
}

}  // namespace surge
