// Oniguruma character classes -> PCRE2 atoms: nested classes are unions, `&&` operands
// intersect (as lookaheads), POSIX brackets and shorthands take tokenizers.js's meaning.
#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/regex_syntax.h"

namespace surge::regex_syntax {
namespace {

constexpr std::string_view kAnyChar = "(?s:.)";

// Rewrites of `\X` inside a class (fragments); empty when X has none.
std::string ClassEscapeRewrite(char x) {
  switch (x) {
    case 'h': return std::string(kHexChars);
    case 'w': return std::string(kWordCharsInClass);
    case 'd': return "\\p{Nd}";
    case 'D': return "\\P{Nd}";
    case 's': return "\\p{White_Space}";
    case 'S': return "\\P{White_Space}";
    case 'a': return "\\x{07}";
    case 'e': return "\\x{1B}";
    case 'v': return "\\x{0B}";
    default: return "";
  }
}

std::string PosixFragment(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kClasses[] = {
      {"alpha", "\\p{Alphabetic}"}, {"alnum", "\\p{Alphabetic}\\p{Nd}"}, {"digit", "\\p{Nd}"},
      {"lower", "\\p{Lowercase}"},  {"upper", "\\p{Uppercase}"},         {"space", "\\p{White_Space}"},
      {"blank", "\\t\\p{Zs}"},      {"punct", "\\p{P}\\p{S}"},           {"cntrl", "\\p{Cc}"},
      {"word", kWordCharsInClass},  {"xdigit", kHexChars},
  };
  for (const auto& [posix_name, fragment] : kClasses) {
    if (posix_name == name) return std::string(fragment);
  }
  return "";
}

// One `&&` operand of a class: directly listed items plus set-valued alternatives.
struct Operand {
  // What the fragment ends with, to tell a range's `-` from a literal one.
  enum class Tail { kNone, kScalar, kRangeDash, kCompleteRange, kSet };

  std::string fragment;
  std::vector<std::string> alternatives;
  Tail tail = Tail::kNone;

  bool empty() const { return fragment.empty() && alternatives.empty(); }
  void Append(std::string_view text, bool set_valued = false) {
    fragment += text;
    tail = tail == Tail::kRangeDash && !set_valued ? Tail::kCompleteRange
           : set_valued                             ? Tail::kSet
                                                    : Tail::kScalar;
  }
  void AddAlternative(std::string atom) {
    alternatives.push_back(std::move(atom));
    tail = Tail::kSet;
  }
  std::string Atom() const {
    std::vector<std::string> pieces;
    if (!fragment.empty()) pieces.push_back("[" + fragment + "]");
    pieces.insert(pieces.end(), alternatives.begin(), alternatives.end());
    if (pieces.size() == 1) return pieces[0];
    std::string out = "(?:";
    for (size_t i = 0; i < pieces.size(); ++i) out += (i ? "|" : "") + pieces[i];
    return out + ")";
  }
};

class ClassTranslator {
 public:
  explicit ClassTranslator(std::string_view source) : src_(source) {}
  StatusOr<ClassResult> Translate(size_t start, bool fold, bool apply_fold, int depth) const;

 private:
  // Each handles the item at src_[i] and returns the index after it.
  size_t Escape(size_t i, Operand* operand) const;
  StatusOr<size_t> Posix(size_t i, Operand* operand) const;
  size_t Dash(size_t i, Operand* operand) const;
  // The atom for the finished class.
  std::string Finish(const std::vector<Operand>& operands, bool negated, bool fold) const;

  std::string_view src_;
};

size_t ClassTranslator::Escape(size_t i, Operand* operand) const {
  std::string_view rest = src_.substr(i);
  if (auto braced = ParseBracedEscape(rest)) {
    const bool word = braced->body == "Word";
    if (braced->kind == 'P' && word) {
      operand->AddAlternative("[^" + std::string(kWordCharsInClass) + "]");
    } else if (braced->kind == 'p' && word) {
      operand->Append(kWordCharsInClass, true);
    } else if (braced->kind == 'x' || braced->kind == 'u') {
      operand->Append("\\x{" + std::string(braced->body) + "}");
    } else {
      operand->Append(rest.substr(0, braced->length), true);
    }
    return i + braced->length;
  }
  if (auto hex = ParseHexEscape(rest)) {
    operand->Append("\\x{" + std::string(hex->first) + "}");
    return i + hex->second;
  }
  if (rest.size() < 2) {
    operand->Append("\\\\");
    return i + 1;
  }
  std::string_view next = CodePointAt(src_, i + 1);
  std::string rewrite = next.size() == 1 ? ClassEscapeRewrite(next[0]) : "";
  if (next == "W" || next == "H") {
    operand->AddAlternative("[^" + std::string(next == "W" ? kWordCharsInClass : kHexChars) + "]");
  } else if (!rewrite.empty()) {
    operand->Append(rewrite, std::string_view("hwdDsS").find(next[0]) != std::string_view::npos);
  } else {
    operand->Append(next.size() == 1 ? "\\" + std::string(next) : std::string(next));
  }
  return i + 1 + next.size();
}

StatusOr<size_t> ClassTranslator::Posix(size_t i, Operand* operand) const {
  size_t close = src_.find(":]", i + 2);
  if (close == std::string_view::npos) return InvalidArgumentError("unterminated POSIX class in regex");
  std::string_view name = src_.substr(i + 2, close - i - 2);
  const bool negated = name.starts_with("^");
  if (negated) name.remove_prefix(1);
  std::string fragment = PosixFragment(name);
  if (fragment.empty()) return UnimplementedError("POSIX class [:" + std::string(name) + ":] in regex");
  if (negated) {
    operand->AddAlternative("[^" + fragment + "]");
  } else {
    operand->Append(fragment, true);
  }
  return close + 2;
}

size_t ClassTranslator::Dash(size_t i, Operand* operand) const {
  const bool terminal = i + 1 >= src_.size() || src_[i + 1] == ']' || src_.substr(i + 1).starts_with("&&");
  if (terminal || operand->tail != Operand::Tail::kScalar) {
    operand->Append("\\-");
  } else {
    operand->fragment += '-';
    operand->tail = Operand::Tail::kRangeDash;
  }
  return i + 1;
}

// Letters whose other case the class lacks, for (?i:...): tested like tokenizers.js does.
std::string AsciiFoldAdditions(const std::string& positive_atom) {
  auto regex = Regex::FromPcre2("^(?:" + positive_atom + ")$");
  if (!regex.ok()) return "";
  std::string additions;
  for (char upper = 'A'; upper <= 'Z'; ++upper) {
    const char lower = static_cast<char>(upper - 'A' + 'a');
    const bool has_upper = (*regex)->FullMatch(std::string_view(&upper, 1));
    const bool has_lower = (*regex)->FullMatch(std::string_view(&lower, 1));
    if (has_upper != has_lower) additions += has_upper ? lower : upper;
  }
  return additions;
}

std::string ClassTranslator::Finish(const std::vector<Operand>& operands, bool negated, bool fold) const {
  std::string positive = operands[0].Atom();
  const bool direct = operands.size() == 1 && operands[0].alternatives.empty();
  if (operands.size() > 1) {
    std::string lookaheads;
    for (size_t k = 1; k < operands.size(); ++k) lookaheads += "(?=" + operands[k].Atom() + ")";
    positive = "(?:" + lookaheads + positive + ")";
  }
  std::string fragment = operands[0].fragment;
  if (fold) {
    std::string additions = AsciiFoldAdditions(positive);
    if (!additions.empty() && direct) {
      fragment += additions;
      positive = "[" + fragment + "]";
    } else if (!additions.empty()) {
      positive = "(?:" + positive + "|[" + additions + "])";
    }
  }
  if (!negated) return positive;
  return direct ? "[^" + fragment + "]" : "(?:(?!" + positive + ")" + std::string(kAnyChar) + ")";
}

StatusOr<ClassResult> ClassTranslator::Translate(size_t start, bool fold, bool apply_fold, int depth) const {
  if (depth > 64) return InvalidArgumentError("regex character classes nested too deeply");
  size_t i = start + 1;
  const bool negated = i < src_.size() && src_[i] == '^';
  if (negated) ++i;
  const size_t first = i;
  std::vector<Operand> operands(1);
  while (i < src_.size()) {
    Operand& operand = operands.back();
    const char c = src_[i];
    if (c == ']' && i > first) {
      if (operand.empty()) return InvalidArgumentError("empty regex character class");
      return ClassResult{Finish(operands, negated, fold && apply_fold), i + 1};
    }
    if (c == '\\') {
      i = Escape(i, &operand);
    } else if (c == ']') {
      operand.Append("\\]");  // first in the class: a literal
      ++i;
    } else if (src_.substr(i).starts_with("&&")) {
      if (operand.empty()) return InvalidArgumentError("regex class intersection with an empty operand");
      operands.emplace_back();
      i += 2;
    } else if (src_.substr(i).starts_with("[:")) {
      ASSIGN_OR_RETURN(i, Posix(i, &operand));
    } else if (c == '[') {
      ASSIGN_OR_RETURN(ClassResult nested, Translate(i, fold, false, depth + 1));
      operand.AddAlternative(nested.atom);
      i = nested.end;
    } else if (c == '-') {
      i = Dash(i, &operand);
    } else {
      std::string_view ch = CodePointAt(src_, i);
      operand.Append(c == '^' ? "\\^" : ch);
      i += ch.size();
    }
  }
  return InvalidArgumentError("unterminated regex character class");
}

}  // namespace

StatusOr<ClassResult> TranslateClass(std::string_view source, size_t start, bool fold) {
  return ClassTranslator(source).Translate(start, fold, true, 1);
}

}  // namespace surge::regex_syntax
