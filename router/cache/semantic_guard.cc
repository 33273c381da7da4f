#include "router/cache/semantic_guard.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>
#include <utility>

namespace surge::router {
namespace {

constexpr std::array<std::string_view, 14> kNegationWords = {
    "not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "without",
    "cannot", "dont", "doesnt", "isnt"};  // the last three: "don't" typed without its apostrophe

// Spelled numbers read as their digits, so "two" and "2" agree (and "two" vs "three" does not).
constexpr std::array<std::pair<std::string_view, std::string_view>, 31> kNumberWords = {{
    {"zero", "0"},     {"one", "1"},        {"two", "2"},       {"three", "3"},      {"four", "4"},
    {"five", "5"},     {"six", "6"},        {"seven", "7"},     {"eight", "8"},      {"nine", "9"},
    {"ten", "10"},     {"eleven", "11"},    {"twelve", "12"},   {"thirteen", "13"},  {"fourteen", "14"},
    {"fifteen", "15"}, {"sixteen", "16"},   {"seventeen", "17"}, {"eighteen", "18"}, {"nineteen", "19"},
    {"twenty", "20"},  {"thirty", "30"},    {"forty", "40"},    {"fifty", "50"},     {"sixty", "60"},
    {"seventy", "70"}, {"eighty", "80"},    {"ninety", "90"},   {"hundred", "100"},  {"thousand", "1000"},
    {"million", "1000000"}}};

// Words that carry the form of a question, not its subject: they may differ freely.
constexpr std::array<std::string_view, 58> kFunctionWords = {
    "a",     "an",   "the",  "and",   "or",   "to",    "of",    "in",   "on",   "at",   "by",   "for",
    "with",  "from", "into", "is",    "are",  "was",   "be",    "do",   "does", "did",  "can",  "could",
    "will",  "would", "should", "may", "i",   "me",    "my",    "you",  "your", "we",   "our",  "it",
    "its",   "this", "that", "there", "what", "whats", "which", "who",  "how",  "when", "where", "why",
    "way",   "tell", "please", "have", "am",   "s",     "any",   "some", "about", "get"};

// Direction prepositions, as the source or the destination they mark: "from Boston" and "to
// Boston" ask other things, "into checking" and "to checking" the same (the roles rule).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kDirectionWords = {{
    {"from", "from"}, {"to", "to"}, {"into", "to"}, {"onto", "to"}, {"toward", "to"}, {"towards", "to"}}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
// Letters, digits, apostrophes and every non-ASCII byte (UTF-8 letters) make words.
bool IsWordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '\'' || (c & 0x80) != 0; }

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// "’" (U+2019) typed for "'" in "don’t": one spelling.
std::string AsciiApostrophes(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i, 3) == "\xE2\x80\x99") {
      out += '\'';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// A number token: digits with "," thousands groups (dropped) and one "." fraction.
std::string CanonicalNumber(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c != ',') out += c;
  }
  while (!out.empty() && (out.back() == '.')) out.pop_back();
  return out;
}

// The entity rule: a word with an uppercase letter that does not just start a sentence
// ("Paris" mid-sentence, "iPhone", "USA" anywhere), not the pronoun "I".
bool IsEntity(std::string_view word, bool sentence_start) {
  if (word == "I" || word.rfind("I'", 0) == 0) return false;
  const bool inner_upper = std::any_of(word.begin() + 1, word.end(), IsUpper);
  return inner_upper || (IsUpper(word.front()) && !sentence_start);
}

// A term (content word or number) in text order, with the direction word that governs it:
// the last one seen since the previous term ("to my checking": checking, "to").
void AddTerm(std::string term, std::string* direction, GuardFeatures* features) {
  if (!direction->empty()) features->directions.emplace_back(term, std::move(*direction));
  direction->clear();
  features->terms.push_back(std::move(term));
}

void AddWord(std::string_view word, bool sentence_start, std::string* direction, GuardFeatures* features) {
  const std::string lower = Lower(word);
  const bool negation = (lower.size() > 3 && lower.compare(lower.size() - 3, 3, "n't") == 0) ||
                        std::find(kNegationWords.begin(), kNegationWords.end(), lower) != kNegationWords.end();
  features->negated = features->negated || negation;
  std::string_view number;
  for (const auto& [spelled, digits] : kNumberWords) {
    if (lower == spelled) number = digits;
  }
  if (!number.empty()) features->numbers.emplace_back(number);
  if (IsEntity(word, sentence_start)) features->entities.push_back(lower);
  std::string bare;
  for (char c : lower) {
    if (c != '\'') bare += c;
  }
  // A plural is the same word to the swap rule ("weekends" / "the weekend").
  if (bare.size() > 3 && bare.back() == 's' && bare[bare.size() - 2] != 's') bare.pop_back();
  for (const auto& [word, role] : kDirectionWords) {
    if (bare != word) continue;
    *direction = role;
    features->relational = true;
    return;
  }
  if (bare == "than") features->relational = true;
  // Negation has its own rule; function words may differ freely.
  if (negation || std::find(kFunctionWords.begin(), kFunctionWords.end(), bare) != kFunctionWords.end()) return;
  features->content_words.push_back(bare);
  AddTerm(number.empty() ? bare : std::string(number), direction, features);
}

// Between two texts that both relate terms (a direction word or "than"): the same terms in another
// order ("from my savings to my checking" / "from my checking to my savings", "version 5 to
// version 4" / "version 4 to version 5", "children pay less than adults" / "adults ... than
// children"). Without a relation word a new order is mostly a paraphrase ("roaming charges" /
// "charge for roaming"). And in any two texts: a term only ever the source in one and only ever the
// destination in the other ("a wire to Germany" / "a wire from Germany").
bool RolesSwapped(const GuardFeatures& a, const GuardFeatures& b) {
  if (a.relational && b.relational && a.terms != b.terms) {
    std::vector<std::string> sorted_a = a.terms, sorted_b = b.terms;
    std::sort(sorted_a.begin(), sorted_a.end());
    std::sort(sorted_b.begin(), sorted_b.end());
    if (sorted_a == sorted_b) return true;
  }
  const auto roles = [](const GuardFeatures& features, const std::string& term) {
    std::vector<std::string> out;
    for (const auto& [other_term, role] : features.directions) {
      if (other_term == term) out.push_back(role);
    }
    return out;
  };
  for (const auto& [term, role] : a.directions) {
    const std::vector<std::string> in_a = roles(a, term), in_b = roles(b, term);
    const bool shared = std::any_of(in_a.begin(), in_a.end(),
                                    [&](const std::string& r) { return std::count(in_b.begin(), in_b.end(), r) > 0; });
    if (!in_b.empty() && !shared) return true;
  }
  return false;
}

// Equal in size and differing in exactly one word each way.
bool OneWordSwapped(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size() || a.empty()) return false;
  std::vector<std::string> only_a, only_b;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
  return only_a.size() == 1 && only_b.size() == 1;
}

}  // namespace

std::string CollapseWhitespace(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c));
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string NormalizeQueryText(std::string_view text) {
  std::string out = Lower(CollapseWhitespace(text));
  while (!out.empty() && (out.back() == '?' || out.back() == '.' || out.back() == '!' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

GuardFeatures ExtractGuardFeatures(std::string_view raw) {
  const std::string text = AsciiApostrophes(raw);
  GuardFeatures features;
  bool sentence_start = true;
  std::string direction;  // the direction word waiting for its term
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (IsDigit(c)) {
      size_t end = i;
      while (end < text.size() && (IsDigit(text[end]) || ((text[end] == ',' || text[end] == '.') &&
                                                          end + 1 < text.size() && IsDigit(text[end + 1])))) {
        ++end;
      }
      features.numbers.push_back(CanonicalNumber(std::string_view(text).substr(i, end - i)));
      AddTerm(features.numbers.back(), &direction, &features);
      sentence_start = false;
      i = end;
    } else if (IsWordByte(c) && c != '\'') {
      size_t end = i;
      while (end < text.size() && IsWordByte(text[end]) && !IsDigit(text[end])) ++end;
      AddWord(std::string_view(text).substr(i, end - i), sentence_start, &direction, &features);
      sentence_start = false;
      i = end;
    } else {
      if (c == '.' || c == '?' || c == '!') sentence_start = true;
      ++i;
    }
  }
  std::sort(features.numbers.begin(), features.numbers.end());
  std::sort(features.entities.begin(), features.entities.end());
  features.entities.erase(std::unique(features.entities.begin(), features.entities.end()), features.entities.end());
  std::sort(features.content_words.begin(), features.content_words.end());
  return features;
}

bool GuardAgrees(const GuardFeatures& query, const GuardFeatures& candidate) {
  return query.numbers == candidate.numbers && query.negated == candidate.negated &&
         query.entities == candidate.entities && !OneWordSwapped(query.content_words, candidate.content_words) &&
         !RolesSwapped(query, candidate);
}

bool GuardAgrees(std::string_view query, std::string_view candidate) {
  return GuardAgrees(ExtractGuardFeatures(query), ExtractGuardFeatures(candidate));
}

}  // namespace surge::router
