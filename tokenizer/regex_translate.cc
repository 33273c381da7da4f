// Oniguruma -> PCRE2 pattern translation (declared in regex.h). The character semantics
// follow tokenizers.js's translator so that both read tokenizer.json patterns alike;
// character classes are in regex_class.cc.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/regex_syntax.h"
#include "base/utf8.h"

namespace surge {
namespace regex_syntax {

std::string_view CodePointAt(std::string_view text, size_t i) {
  size_t length = Utf8SequenceLength(static_cast<uint8_t>(text[i]));
  return text.substr(i, std::min(length, text.size() - i));
}

bool AllHex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

bool IsAsciiLetter(char32_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

std::string FoldedLetter(char c) {
  return std::string("[") + static_cast<char>(std::tolower(c)) + static_cast<char>(std::toupper(c)) + "]";
}

std::optional<BracedEscape> ParseBracedEscape(std::string_view rest) {
  if (rest.size() < 4 || rest[0] != '\\' || rest[2] != '{' ||
      std::string_view("pPxu").find(rest[1]) == std::string_view::npos) {
    return std::nullopt;
  }
  size_t close = rest.find('}');
  if (close == std::string_view::npos) return std::nullopt;
  BracedEscape escape{rest[1], rest.substr(3, close - 3), close + 1};
  if ((escape.kind == 'x' || escape.kind == 'u') && !AllHex(escape.body)) return std::nullopt;
  return escape;
}

std::optional<std::pair<std::string_view, size_t>> ParseHexEscape(std::string_view rest) {
  if (rest.size() >= 4 && rest.starts_with("\\x") && AllHex(rest.substr(2, 2))) return std::pair(rest.substr(2, 2), 4);
  if (rest.size() >= 6 && rest.starts_with("\\u") && AllHex(rest.substr(2, 4))) return std::pair(rest.substr(2, 4), 6);
  return std::nullopt;
}

}  // namespace regex_syntax

namespace {

using namespace regex_syntax;  // NOLINT: this file is that namespace's main user

std::string WordBoundary(bool negated) {
  const std::string w(kWordClass);
  if (negated) return "(?:(?<!" + w + ")(?!" + w + ")|(?<=" + w + ")(?=" + w + "))";
  return "(?:(?<!" + w + ")(?=" + w + ")|(?<=" + w + ")(?!" + w + "))";
}

// Rewrites of `\X` outside a character class; empty when X has none.
std::string EscapeRewrite(char x) {
  switch (x) {
    case 'A': return "\\A";
    case 'z': return "\\z";
    case 'Z': return "\\Z";
    case 'h': return "[0-9A-Fa-f]";
    case 'H': return "[^0-9A-Fa-f]";
    case 'w': return std::string(kWordClass);
    case 'W': return std::string(kNonWordClass);
    case 'd': return "\\p{Nd}";
    case 'D': return "\\P{Nd}";
    case 's': return "\\p{White_Space}";
    case 'S': return "\\P{White_Space}";
    case 'b': return WordBoundary(false);
    case 'B': return WordBoundary(true);
    case 'a': return "\\x{07}";
    case 'e': return "\\x{1B}";
    case 'v': return "\\x{0B}";  // PCRE2's \v is a class; Oniguruma's is VT
    default: return "";
  }
}

// "\x{HEX}" or, inside (?i:...) for an ASCII letter, "[aA]".
std::string CodePointAtom(std::string_view hex, bool fold) {
  unsigned long value = std::strtoul(std::string(hex).c_str(), nullptr, 16);
  if (fold && value < 0x80 && IsAsciiLetter(static_cast<char32_t>(value))) {
    return FoldedLetter(static_cast<char>(value));
  }
  return "\\x{" + std::string(hex) + "}";
}

class Translator {
 public:
  explicit Translator(std::string_view source) : src_(source) {}
  StatusOr<std::string> Run();

 private:
  void EmitAtom(std::string_view text) {
    atom_start_ = static_cast<int>(out_.size());
    out_ += text;
  }
  // Each handles the construct at src_[i_] and advances i_.
  void Escape();
  void OpenGroup();
  void CloseGroup();
  void Brace();  // a counted quantifier or a literal brace
  void Literal();

  std::string_view src_;
  size_t i_ = 0;
  std::string out_;
  int atom_start_ = -1;  // where the last atom starts in out_, for wrapping a quantifier
  bool fold_ = false;    // inside (?i:...)
  std::vector<std::pair<int, bool>> groups_;  // (output offset, fold) of each open group
};

void Translator::Escape() {
  std::string_view rest = src_.substr(i_);
  if (auto braced = ParseBracedEscape(rest)) {
    if (braced->kind == 'x' || braced->kind == 'u') {
      EmitAtom(CodePointAtom(braced->body, fold_));
    } else if (braced->body == "Word") {
      EmitAtom(braced->kind == 'p' ? kWordClass : kNonWordClass);
    } else {
      EmitAtom(rest.substr(0, braced->length));
    }
    i_ += braced->length;
    return;
  }
  if (auto hex = ParseHexEscape(rest)) {
    EmitAtom(CodePointAtom(hex->first, fold_));
    i_ += hex->second;
    return;
  }
  if (rest.size() < 2) {  // a trailing backslash: PCRE2 reports it
    out_ += '\\';
    ++i_;
    return;
  }
  std::string_view next = CodePointAt(src_, i_ + 1);
  i_ += 1 + next.size();
  if (next == "G") return;  // \G (search start) means nothing in a split pattern
  std::string rewrite = next.size() == 1 ? EscapeRewrite(next[0]) : "";
  if (!rewrite.empty()) {
    EmitAtom(rewrite);
  } else {
    EmitAtom(next.size() == 1 ? "\\" + std::string(next) : std::string(next));
  }
}

void Translator::OpenGroup() {
  groups_.emplace_back(static_cast<int>(out_.size()), fold_);
  if (src_.substr(i_).starts_with("(?i:")) {
    fold_ = true;
    out_ += "(?:";
    i_ += 4;
    return;
  }
  out_ += '(';  // lookarounds, named and atomic groups are PCRE2 syntax already
  ++i_;
}

void Translator::CloseGroup() {
  out_ += ')';
  atom_start_ = -1;
  if (!groups_.empty()) {
    std::tie(atom_start_, fold_) = groups_.back();
    groups_.pop_back();
  }
  ++i_;
}

void Translator::Brace() {
  std::string_view rest = src_.substr(i_);
  size_t close = rest.find('}');
  std::string_view body = close == std::string_view::npos ? "" : rest.substr(1, close - 1);
  size_t comma = body.find(',');
  auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  };
  bool valid = atom_start_ >= 0 && !body.empty() && body != "," && digits(body.substr(0, comma)) &&
               (comma == std::string_view::npos || digits(body.substr(comma + 1)));
  if (!valid) {
    EmitAtom("\\{");
    ++i_;
    return;
  }
  std::string count = body[0] == ',' ? "0" + std::string(body) : std::string(body);
  i_ += close + 1;
  if (i_ < src_.size() && (src_[i_] == '+' || src_[i_] == '*')) {
    // Oniguruma reads `X{n}+` as (X{n})+, not as a possessive quantifier.
    out_ = out_.substr(0, atom_start_) + "(?:" + out_.substr(atom_start_) + "{" + count + "})" + src_[i_];
    ++i_;
  } else {
    out_ += "{" + count + "}";
  }
}

void Translator::Literal() {
  std::string_view ch = CodePointAt(src_, i_);
  EmitAtom(fold_ && ch.size() == 1 && IsAsciiLetter(ch[0]) ? FoldedLetter(ch[0]) : std::string(ch));
  i_ += ch.size();
}

StatusOr<std::string> Translator::Run() {
  while (i_ < src_.size()) {
    switch (src_[i_]) {
      case '\\': Escape(); break;
      case '[': {
        ASSIGN_OR_RETURN(ClassResult parsed, TranslateClass(src_, i_, fold_));
        EmitAtom(parsed.atom);
        i_ = parsed.end;
        break;
      }
      case ']': EmitAtom("\\]"); ++i_; break;
      case '.': EmitAtom("[^\\n]"); ++i_; break;
      case '^': EmitAtom("(?:\\A|(?<=\\n))"); ++i_; break;  // line anchors on \n only
      case '$': EmitAtom("(?:(?=\\n)|\\z)"); ++i_; break;
      case '(': OpenGroup(); break;
      case ')': CloseGroup(); break;
      case '|': out_ += '|'; atom_start_ = -1; ++i_; break;
      case '{': Brace(); break;
      case '}': EmitAtom("\\}"); ++i_; break;
      case '+': case '*': case '?': out_ += src_[i_++]; break;
      default: Literal();
    }
  }
  return out_;
}

}  // namespace

StatusOr<std::string> TranslateOnigurumaToPcre2(std::string_view pattern) {
  return Translator(pattern).Run();
}

}  // namespace surge
