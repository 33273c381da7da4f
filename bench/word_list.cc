#include "bench/word_list.h"

#include <algorithm>
#include <cmath>

namespace surge::bench {
namespace {

constexpr std::string_view kWords[] = {
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
    "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
    "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more",
    "when", "will", "would", "who", "so", "no", "she", "other", "its", "may", "these", "what", "them",
    "than", "some", "him", "time", "into", "only", "do", "could", "new", "about", "two", "first",
    "then", "any", "like", "my", "now", "over", "such", "our", "man", "me", "even", "most", "made",
    "after", "also", "did", "many", "before", "must", "through", "back", "years", "where", "much",
    "your", "way", "well", "down", "should", "because", "each", "just", "those", "people", "how",
    "too", "little", "state", "good", "very", "make", "world", "still", "own", "see", "men", "work",
    "long", "get", "here", "between", "both", "life", "being", "under", "never", "day", "same",
    "another", "know", "while", "last", "might", "us", "great", "old", "year", "off", "come",
    "since", "against", "go", "came", "right", "used", "take", "three", "small", "house", "water",
    "light", "night", "road", "tree", "city", "river", "music", "book", "game", "family", "friend",
    "school", "table", "window", "garden", "paper", "story", "money", "power", "morning", "summer",
    "winter", "dog", "cat", "bird", "fish", "horse", "king", "queen", "ship", "train", "car",
    "door", "wall", "field", "hand", "head", "eye", "face", "heart", "mind", "voice", "word",
    "name", "place", "part", "point", "case", "fact", "group", "number", "problem", "system",
    "program", "question", "order", "service", "market", "letter", "line", "end", "side", "open",
    "close", "early", "late", "high", "low", "young", "large", "big", "short", "hard", "free",
    "full", "real", "best", "better", "sure", "true", "clear", "white", "black", "red", "green",
    "blue", "gold", "cold", "warm", "happy", "simple", "quick", "slow", "bright", "dark", "quiet",
    "walk", "run", "play", "read", "write", "think", "look", "find", "give", "tell", "call",
    "keep", "turn", "start", "show", "hear", "leave", "move", "live", "bring", "hold", "stand",
    "sit", "build", "learn", "change", "follow", "begin", "help", "watch", "talk", "open",
};

}  // namespace

std::span<const std::string_view> CommonWords() { return kWords; }

std::string RandomWords(Rng& rng, int64_t num_words) {
  std::string text;
  text.reserve(static_cast<size_t>(std::max<int64_t>(num_words, 0)) * 6);
  const int64_t last = static_cast<int64_t>(std::size(kWords)) - 1;
  for (int64_t i = 0; i < num_words; ++i) {
    if (i > 0) text += ' ';
    text += kWords[rng.UniformInt(0, last)];
  }
  return text;
}

int64_t WordsForTokens(int64_t num_tokens, double tokens_per_word) {
  if (!(tokens_per_word > 0)) tokens_per_word = 1.0;
  return std::max<int64_t>(1, std::llround(static_cast<double>(num_tokens) / tokens_per_word));
}

}  // namespace surge::bench
