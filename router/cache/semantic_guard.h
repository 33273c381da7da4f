// The semantic cache's text side: the query's normal form (what is embedded) and the lexical
// guard that must agree before a similar-enough stored answer is served. Embeddings place
// "reset my password" and "do not reset my password" close together; the guard catches
// what they blur -- numbers, negation, names (router/cache/README.md: "The guard").
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace surge::router {

// Whitespace runs become one space, ends trimmed: the text the guard reads (case kept, it
// matters to the entity rule).
std::string CollapseWhitespace(std::string_view text);

// What is embedded: CollapseWhitespace, ASCII lowercased, trailing ".?!" and spaces dropped,
// so "How do I reset my password?" and "how do i reset my password" embed alike.
std::string NormalizeQueryText(std::string_view text);

// What the guard compares between a query and a stored request's text.
struct GuardFeatures {
  std::vector<std::string> numbers;   // sorted multiset: "1000" for "1,000", "2" for "two", "3.5"
  bool negated = false;               // a negation word: not, no, never, without, n't, ...
  std::vector<std::string> entities;  // sorted, deduplicated, lowercased (the entity rule)
  // Lowercased words outside a short function-word list, sorted (a multiset): the swap rule.
  std::vector<std::string> content_words;
  // Content words (spelled numbers as digits) and numbers in text order: the roles rule.
  std::vector<std::string> terms;
  // (term, "from" or "to") for each term right after a direction word -- from; to, into, onto,
  // toward(s) read as "to" -- only function words between ("into my checking": {"checking", "to"}).
  std::vector<std::pair<std::string, std::string>> directions;
  bool relational = false;  // a direction word or "than": the order of the terms matters
};
GuardFeatures ExtractGuardFeatures(std::string_view text);

// True when both texts have equal number multisets, the same negation presence and equal
// entity sets, and they are not one content word apart: the same content words but one
// swapped for another ("cancel" / "renew my subscription", "apple" / "banana") changes what is
// asked while the embedding barely moves (the near misses of docs/BENCH.md's set), and their roles
// are not swapped: the same terms in another order when both relate them (a direction word or
// "than": "from Texas to Mexico" / "from Mexico to Texas"), or a term the source in one and the
// destination in the other ("a wire to Germany" / "a wire from Germany").
// Errs towards disagreeing: a lowercased name is not an entity, so
// "capital of france" vs "capital of France" disagree (a miss, never a wrong answer).
bool GuardAgrees(std::string_view query, std::string_view candidate);
bool GuardAgrees(const GuardFeatures& query, const GuardFeatures& candidate);

}  // namespace surge::router
