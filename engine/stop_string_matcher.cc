#include "engine/stop_string_matcher.h"

#include <algorithm>

namespace surge {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (std::string& stop : stops) {
    if (stop.empty()) continue;
    max_stop_bytes_ = std::max(max_stop_bytes_, stop.size());
    stops_.push_back(std::move(stop));
  }
}

StopStringMatcher::Result StopStringMatcher::Add(std::string_view text) {
  Result result;
  if (stopped_) return result;
  if (stops_.empty()) {
    result.text = text;
    return result;
  }
  held_.append(text);
  // held_ had no complete match before, so a new one ends in the new text. The one that
  // ends first wins (the longest of those, when several end together): the result is
  // the same however the text was cut into pieces, as if it came one byte at a time.
  size_t match = std::string::npos, match_end = std::string::npos;
  const size_t search_from = held_.size() - text.size();
  for (const std::string& stop : stops_) {
    const size_t from = search_from >= stop.size() ? search_from - stop.size() + 1 : 0;
    const size_t start = held_.find(stop, from);
    if (start == std::string::npos) continue;
    const size_t end = start + stop.size();
    if (end < match_end || (end == match_end && start < match)) match = start, match_end = end;
  }
  if (match != std::string::npos) {
    stopped_ = true;
    result.stopped = true;
    result.text = held_.substr(0, match);
    held_.clear();
    return result;
  }
  const size_t keep = LongestPartialMatch();
  result.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return result;
}

std::string StopStringMatcher::Flush() {
  std::string text = std::move(held_);
  held_.clear();
  return stopped_ ? std::string() : text;
}

// A stop string is valid UTF-8 and starts on a character boundary, so a suffix of held_
// that begins one does too: what is emitted is always whole characters.
size_t StopStringMatcher::LongestPartialMatch() const {
  const size_t longest = std::min(held_.size(), max_stop_bytes_ - 1);
  for (size_t length = longest; length > 0; --length) {
    const std::string_view tail = std::string_view(held_).substr(held_.size() - length);
    for (const std::string& stop : stops_) {
      if (stop.size() > length && std::string_view(stop).starts_with(tail)) return length;
    }
  }
  return 0;
}

}  // namespace surge
