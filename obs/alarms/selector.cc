// PromQL instant-vector selectors: `name{label op "value", ...}`.
#include <algorithm>
#include <cctype>

#include "obs/alarms/alarm_rules.h"

namespace surge::obs {
namespace {

bool IsNameChar(char c, bool first, bool allow_colon) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (allow_colon && c == ':') ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

class SelectorParser {
 public:
  explicit SelectorParser(std::string_view text) : text_(text) {}

  StatusOr<Selector> Parse() {
    Selector selector;
    selector.metric = Name(true);
    if (selector.metric.empty()) return Error("expected a metric name");
    SkipSpace();
    if (pos_ == text_.size()) return selector;
    if (text_[pos_] != '{') return Error("expected '{' or the end");
    ++pos_;
    while (true) {
      SkipSpace();
      if (Take('}')) break;
      ASSIGN_OR_RETURN(LabelMatcher matcher, Matcher());
      selector.matchers.push_back(std::move(matcher));
      SkipSpace();
      if (Take('}')) break;
      if (!Take(',')) return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after '}'");
    return selector;
  }

 private:
  StatusOr<LabelMatcher> Matcher() {
    LabelMatcher m;
    m.name = Name(false);
    if (m.name.empty()) return Error("expected a label name");
    SkipSpace();
    if (Take('=')) m.op = Take('~') ? LabelMatcher::Op::kRe : LabelMatcher::Op::kEq;
    else if (Take('!')) {
      if (Take('=')) m.op = LabelMatcher::Op::kNe;
      else if (Take('~')) m.op = LabelMatcher::Op::kNre;
      else return Error("expected != or !~");
    } else {
      return Error("expected one of = != =~ !~");
    }
    SkipSpace();
    ASSIGN_OR_RETURN(m.value, Quoted());
    if (m.op == LabelMatcher::Op::kRe || m.op == LabelMatcher::Op::kNre) {
      StatusOr<std::unique_ptr<BoundedRegex>> regex = BoundedRegex::Compile(m.value);
      if (!regex.ok()) {
        const std::string shown = m.value.size() > 64 ? m.value.substr(0, 64) + "..." : m.value;
        return Error("bad regex '" + shown + "': " + regex.status().message());
      }
      m.regex = std::move(regex).value();
    }
    return m;
  }

  StatusOr<std::string> Quoted() {
    if (!Take('"')) return Error("expected a double-quoted value");
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        const char e = text_[pos_++];
        c = e == 'n' ? '\n' : e;
        if (e != 'n' && e != '"' && e != '\\') return Error("unknown escape '\\" + std::string(1, e) + "'");
      }
      value.push_back(c);
    }
    if (!Take('"')) return Error("unterminated string");
    return value;
  }

  std::string Name(bool allow_colon) {
    const size_t begin = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_], pos_ == begin, allow_colon)) ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool Take(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  Status Error(const std::string& what) const {
    const std::string shown = text_.size() > 128 ? std::string(text_.substr(0, 128)) + "..." : std::string(text_);
    return InvalidArgumentError("selector '" + shown + "' at " + std::to_string(pos_) + ": " + what);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<Selector> ParseSelector(std::string_view text) { return SelectorParser(text).Parse(); }

bool LabelMatcher::Matches(const Labels& labels) const {
  auto it = labels.find(name);
  const std::string& actual = it == labels.end() ? std::string() : it->second;
  switch (op) {
    case Op::kEq: return actual == value;
    case Op::kNe: return actual != value;
    case Op::kRe: {
      StatusOr<bool> matched = regex->FullMatch(actual);
      return matched.ok() && *matched;
    }
    case Op::kNre: {
      StatusOr<bool> matched = regex->FullMatch(actual);
      return matched.ok() && !*matched;
    }
  }
  return false;
}

bool Selector::Matches(const Labels& labels) const {
  return std::all_of(matchers.begin(), matchers.end(), [&](const LabelMatcher& m) { return m.Matches(labels); });
}

std::string Selector::ToPromQL() const {
  if (matchers.empty()) return metric;
  static constexpr const char* kOps[] = {"=", "!=", "=~", "!~"};
  std::string out = metric + "{";
  for (size_t i = 0; i < matchers.size(); ++i) {
    const LabelMatcher& m = matchers[i];
    std::string escaped;
    for (char c : m.value) escaped += c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    out += (i ? "," : "") + m.name + kOps[static_cast<int>(m.op)] + "\"" + escaped + "\"";
  }
  return out + "}";
}

}  // namespace surge::obs
