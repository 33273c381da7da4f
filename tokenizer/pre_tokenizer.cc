#include "tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "tokenizer/byte_level.h"
#include "base/utf8.h"

namespace surge {
namespace {

// GPT-2's pattern as tokenizers.js compiles it: JavaScript's own \s (which, unlike
// \p{White_Space}, includes U+FEFF and excludes U+0085).
constexpr std::string_view kJsSpace =
    "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
    "\\x{3000}\\x{FEFF}";

std::string Gpt2Pattern() {
  std::string s(kJsSpace);
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + s + "\\p{L}\\p{N}]+|[" + s + "]+(?![^" + s +
         "])|[" + s + "]+";
}

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void Split(std::string_view piece, int section_index, std::vector<std::string>* out) const override {
    std::vector<std::string> pieces = {std::string(piece)};
    std::vector<std::string> next;
    for (const auto& step : steps_) {
      next.clear();
      for (const std::string& current : pieces) step->Split(current, section_index, &next);
      pieces.swap(next);
    }
    for (std::string& result : pieces) out->push_back(std::move(result));
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void Split(std::string_view piece, int section_index, std::vector<std::string>* out) const override {
    thread_local std::vector<MatchSpan> matches;
    thread_local std::vector<std::pair<MatchSpan, bool>> segments;
    matches.clear();
    segments.clear();
    pattern_.FindAll(piece, &matches);
    size_t pos = 0;
    for (const MatchSpan& match : matches) {
      if (match.first == match.second) continue;
      if (match.first > pos) segments.push_back({{pos, match.first}, invert_});
      segments.push_back({match, !invert_});
      pos = match.second;
    }
    if (pos < piece.size()) segments.push_back({{pos, piece.size()}, invert_});
    if (behavior_ == SplitBehavior::kIsolated) {  // the hot path: every segment is a piece
      for (const auto& [span, is_delimiter] : segments) {
        out->emplace_back(piece.substr(span.first, span.second - span.first));
      }
      return;
    }
    for (const MatchSpan& span : ApplySplitBehavior(segments, behavior_)) {
      out->emplace_back(piece.substr(span.first, span.second - span.first));
    }
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, std::unique_ptr<Regex> regex)
      : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
  void Split(std::string_view piece, int section_index, std::vector<std::string>* out) const override {
    std::string prefixed;
    if (add_prefix_space_ && !piece.starts_with(' ')) {
      prefixed = " " + std::string(piece);
      piece = prefixed;
    }
    if (regex_ == nullptr) {
      AppendMapped(piece, out);
      return;
    }
    // Like String.prototype.match: only the matches are kept (GPT-2's pattern covers all text).
    thread_local std::vector<MatchSpan> matches;
    matches.clear();
    regex_->FindAll(piece, &matches);
    for (const MatchSpan& match : matches) {
      if (match.second > match.first) AppendMapped(piece.substr(match.first, match.second - match.first), out);
    }
  }

 private:
  static void AppendMapped(std::string_view bytes, std::vector<std::string>* out) {
    out->emplace_back();
    out->back().reserve(bytes.size() * 2);
    AppendByteLevel(bytes, &out->back());
  }

  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;  // null without use_regex
};

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void Split(std::string_view piece, int section_index, std::vector<std::string>* out) const override {
    std::string text = ReplaceAll(piece, " ", replacement_);
    bool prepend = scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && section_index == 0);
    if (prepend && !text.starts_with(replacement_)) text = replacement_ + text;
    if (!split_ || replacement_.empty()) {
      out->push_back(std::move(text));
      return;
    }
    // MergedWithNext on the replacement: every piece but the first starts with it.
    size_t start = 0;
    for (size_t pos = text.find(replacement_, 1); pos != std::string::npos;
         pos = text.find(replacement_, pos + replacement_.size())) {
      if (pos > start) out->push_back(text.substr(start, pos - start));
      start = pos;
    }
    if (start < text.size()) out->push_back(text.substr(start));
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class DigitsPreTokenizer : public PreTokenizer {
 public:
  explicit DigitsPreTokenizer(bool individual_digits) : individual_digits_(individual_digits) {}
  void Split(std::string_view piece, int section_index, std::vector<std::string>* out) const override {
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    size_t start = 0;
    while (start < piece.size()) {
      size_t end = start + 1;
      const bool digit = is_digit(piece[start]);
      if (!digit || !individual_digits_) {
        while (end < piece.size() && is_digit(piece[end]) == digit) ++end;
      }
      out->emplace_back(piece.substr(start, end - start));
      start = end;
    }
  }

 private:
  bool individual_digits_;
};

// MergedWithPrevious (forward) / MergedWithNext (over reversed segments): a delimiter
// joins the piece before it, unless that piece was a delimiter too (the Rust rule).
template <typename Iterator>
std::vector<MatchSpan> MergeDelimiters(Iterator begin, Iterator end, bool reversed) {
  std::vector<MatchSpan> pieces;
  bool previous_delimiter = false;
  for (Iterator it = begin; it != end; ++it) {
    const auto& [span, delimiter] = *it;
    if (delimiter && !previous_delimiter && !pieces.empty()) {
      (reversed ? pieces.back().first : pieces.back().second) = reversed ? span.first : span.second;
    } else {
      pieces.push_back(span);
    }
    previous_delimiter = delimiter;
  }
  return pieces;
}

}  // namespace

std::vector<std::string> PreTokenize(const PreTokenizer& pre_tokenizer, std::string_view text,
                                     int section_index) {
  std::vector<std::string> pieces;
  pre_tokenizer.Split(text, section_index, &pieces);
  std::erase_if(pieces, [](const std::string& piece) { return piece.empty(); });
  return pieces;
}

std::vector<MatchSpan> ApplySplitBehavior(const std::vector<std::pair<MatchSpan, bool>>& segments,
                                          SplitBehavior behavior) {
  std::vector<MatchSpan> pieces;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const auto& [span, delimiter] : segments) {
        if (!delimiter) pieces.push_back(span);
      }
      return pieces;
    case SplitBehavior::kIsolated:
      for (const auto& [span, delimiter] : segments) pieces.push_back(span);
      return pieces;
    case SplitBehavior::kMergedWithPrevious:
      return MergeDelimiters(segments.begin(), segments.end(), false);
    case SplitBehavior::kMergedWithNext:
      pieces = MergeDelimiters(segments.rbegin(), segments.rend(), true);
      std::reverse(pieces.begin(), pieces.end());
      return pieces;
    case SplitBehavior::kContiguous: {
      bool previous_delimiter = false;
      for (size_t i = 0; i < segments.size(); ++i) {
        if (i > 0 && segments[i].second == previous_delimiter) {
          pieces.back().second = segments[i].first.second;
        } else {
          pieces.push_back(segments[i].first);
        }
        previous_delimiter = segments[i].second;
      }
      return pieces;
    }
  }
  return pieces;
}

std::unique_ptr<PreTokenizer> MakeSequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) {
  return std::make_unique<SequencePreTokenizer>(std::move(steps));
}

std::unique_ptr<PreTokenizer> MakeSplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert) {
  return std::make_unique<SplitPreTokenizer>(std::move(pattern), behavior, invert);
}

StatusOr<std::unique_ptr<PreTokenizer>> MakeByteLevelPreTokenizer(bool add_prefix_space, bool use_regex) {
  std::unique_ptr<Regex> regex;
  if (use_regex) {
    ASSIGN_OR_RETURN(regex, Regex::FromPcre2(Gpt2Pattern()));
  }
  return std::unique_ptr<PreTokenizer>(std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, std::move(regex)));
}

std::unique_ptr<PreTokenizer> MakeMetaspacePreTokenizer(std::string replacement, PrependScheme scheme,
                                                        bool split) {
  return std::make_unique<MetaspacePreTokenizer>(std::move(replacement), scheme, split);
}

std::unique_ptr<PreTokenizer> MakeDigitsPreTokenizer(bool individual_digits) {
  return std::make_unique<DigitsPreTokenizer>(individual_digits);
}

}  // namespace surge
