#include "tokenizer/decoder.h"

#include "tokenizer/byte_level.h"
#include "base/utf8.h"

namespace surge {
namespace {

class ByteLevelDecoder : public Decoder {
 public:
  explicit ByteLevelDecoder(const TokenSet* added_tokens) : added_tokens_(added_tokens) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    std::vector<std::string> out;
    std::string bytes;
    auto flush = [&] {
      if (bytes.empty()) return;
      out.emplace_back();
      *incomplete_tail = AppendUtf8Lossy(bytes, &out.back());
      bytes.clear();
    };
    for (const std::string& token : *tokens) {
      if (added_tokens_->contains(token)) {
        flush();
        out.push_back(token);
        *incomplete_tail = false;
      } else {
        AppendBytes(token, &bytes);
      }
    }
    flush();
    tokens->swap(out);
  }

 private:
  // A character outside the byte map stands for its own UTF-8 (the Rust crate's rule;
  // tokenizers.js would write a 0 byte).
  static void AppendBytes(std::string_view token, std::string* bytes) {
    for (size_t pos = 0; pos < token.size();) {
      size_t start = pos;
      int byte = UnicodeToByte(NextCodePoint(token, &pos));
      if (byte >= 0) {
        bytes->push_back(static_cast<char>(byte));
      } else {
        bytes->append(token.substr(start, pos - start));
      }
    }
  }

  const TokenSet* added_tokens_;
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    for (size_t i = 0; i < tokens->size(); ++i) {
      std::string& token = (*tokens)[i];
      if (!replacement_.empty()) token = ReplaceAll(token, replacement_, " ");
      if (i == 0 && strip_first_ && token.starts_with(' ')) token.erase(0, 1);
    }
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    for (std::string& token : *tokens) token = pattern_.ReplaceAll(token, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// The byte of a "<0xNN>" token, or -1.
int ByteFallbackValue(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  int high = hex(token[3]);
  int low = hex(token[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

class ByteFallbackDecoder : public Decoder {
 public:
  explicit ByteFallbackDecoder(bool drop_leading_bom) : drop_leading_bom_(drop_leading_bom) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    std::vector<std::string> out;
    std::string bytes;
    for (std::string& token : *tokens) {
      int byte = ByteFallbackValue(token);
      if (byte >= 0) {
        bytes.push_back(static_cast<char>(byte));
        continue;
      }
      if (!bytes.empty()) out.push_back(DecodeRun(bytes, incomplete_tail));
      bytes.clear();
      out.push_back(std::move(token));
      *incomplete_tail = false;
    }
    if (!bytes.empty()) out.push_back(DecodeRun(bytes, incomplete_tail));
    tokens->swap(out);
  }

 private:
  // tokenizers.js decodes each run with a default TextDecoder, which drops a leading
  // byte-order mark; we do the same so that both decode alike (unless told not to).
  std::string DecodeRun(std::string_view bytes, bool* incomplete_tail) const {
    if (drop_leading_bom_ && bytes.starts_with("\xEF\xBB\xBF")) bytes.remove_prefix(3);
    std::string text;
    *incomplete_tail = AppendUtf8Lossy(bytes, &text);
    return text;
  }

  bool drop_leading_bom_;
};

class FuseDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    std::string fused;
    for (const std::string& token : *tokens) fused += token;
    tokens->assign(1, std::move(fused));
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, int start, int stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    if (content_.empty()) return;
    for (std::string& token : *tokens) {
      std::string_view view = token;
      for (int i = 0; i < start_ && view.starts_with(content_); ++i) view.remove_prefix(content_.size());
      for (int i = 0; i < stop_ && view.ends_with(content_); ++i) view.remove_suffix(content_.size());
      token = std::string(view);
    }
  }
  bool prefix_stable() const override { return stop_ == 0; }

 private:
  std::string content_;
  int start_;
  int stop_;
};

class BpeDecoder : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    if (suffix_.empty()) return;
    for (size_t i = 0; i < tokens->size(); ++i) {
      (*tokens)[i] = ReplaceAll((*tokens)[i], suffix_, i + 1 == tokens->size() ? "" : " ");
    }
  }
  bool prefix_stable() const override { return suffix_.empty(); }

 private:
  std::string suffix_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void DecodeChain(std::vector<std::string>* tokens, bool* incomplete_tail) const override {
    for (const auto& step : steps_) step->DecodeChain(tokens, incomplete_tail);
  }
  bool prefix_stable() const override {
    for (const auto& step : steps_) {
      if (!step->prefix_stable()) return false;
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> MakeByteLevelDecoder(const TokenSet* added_tokens) {
  return std::make_unique<ByteLevelDecoder>(added_tokens);
}
std::unique_ptr<Decoder> MakeMetaspaceDecoder(std::string replacement, bool strip_first) {
  return std::make_unique<MetaspaceDecoder>(std::move(replacement), strip_first);
}
std::unique_ptr<Decoder> MakeReplaceDecoder(Pattern pattern, std::string content) {
  return std::make_unique<ReplaceDecoder>(std::move(pattern), std::move(content));
}
std::unique_ptr<Decoder> MakeByteFallbackDecoder(bool drop_leading_bom) {
  return std::make_unique<ByteFallbackDecoder>(drop_leading_bom);
}
std::unique_ptr<Decoder> MakeFuseDecoder() { return std::make_unique<FuseDecoder>(); }
std::unique_ptr<Decoder> MakeStripDecoder(std::string content, int start, int stop) {
  return std::make_unique<StripDecoder>(std::move(content), start, stop);
}
std::unique_ptr<Decoder> MakeBpeDecoder(std::string suffix) {
  return std::make_unique<BpeDecoder>(std::move(suffix));
}
std::unique_ptr<Decoder> MakeSequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) {
  return std::make_unique<SequenceDecoder>(std::move(steps));
}

}  // namespace surge
