// StopStringMatcher: finds stop strings in a choice's streamed text and holds back any
// text that might be the beginning of one, so that no part of a stop string is ever
// emitted (a stop string may span many tokens).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace surge {

class StopStringMatcher {
 public:
  // Empty strings in `stops` are ignored (the engine refuses them at submit).
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Result {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string matched; `text` is everything before it
  };

  // Takes the next piece of decoded text (complete UTF-8). Emits all held and new text up
  // to the point where a stop string might still begin. Stops at the first stop string
  // to complete (the longest, if several complete at the same byte), emitting the text
  // before it -- independent of how the text is cut into pieces. After a stop, returns
  // nothing.
  Result Add(std::string_view text);

  // The text still held back (a stop string that never completed): the choice ended for
  // another reason, so it is emitted after all.
  std::string Flush();

  bool stopped() const { return stopped_; }

 private:
  // Bytes at the end of held_ that are a proper prefix of some stop string.
  size_t LongestPartialMatch() const;

  std::vector<std::string> stops_;
  size_t max_stop_bytes_ = 0;
  std::string held_;  // received, not yet emitted; shorter than the longest stop string
  bool stopped_ = false;
};

}  // namespace surge
