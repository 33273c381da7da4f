// IncrementalDecoder (declared in tokenizer.h).
//
// Windowed mode (every decoder but a few rare ones): like vLLM's detokenizer, each Add
// decodes a small window of ids starting at the ids emitted by the previous step, and
// returns the text past what that prefix decoded to. Starting the window one step back
// keeps the first-token rules (Metaspace/Strip drop one leading space) on a token already
// emitted. A step whose text ends in an incomplete UTF-8 character (the byte decoders
// report it) emits nothing, so a window only ever starts where earlier bytes formed
// complete characters; bytes that can never form one come out at once as U+FFFD.
#include <algorithm>

#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"
#include "base/utf8.h"

namespace surge {
namespace {

bool EndsWithReplacement(std::string_view text) { return text.ends_with(kReplacementUtf8); }

// Characters that can take part in a clean-up rewrite (" ." ... " 're"), deleted spaces
// included; a match never spans more than 8 bytes of the raw text.
bool IsCleanUpChar(char c) {
  return std::string_view(" .?!,'ntmsver").find(c) != std::string_view::npos;
}
constexpr size_t kMaxCleanUpSpanBytes = 8;

// The largest prefix of `raw` that clean-up can rewrite without seeing what follows.
size_t SafeCleanUpCut(std::string_view raw) {
  for (size_t cut = raw.size(); cut > 0; --cut) {
    if (cut < raw.size() && (static_cast<uint8_t>(raw[cut]) & 0xC0) == 0x80) continue;
    if (!IsCleanUpChar(raw[cut - 1])) return cut;
    size_t window_start = cut > kMaxCleanUpSpanBytes ? cut - kMaxCleanUpSpanBytes : 0;
    if (raw.substr(window_start, cut - window_start).find(' ') == std::string_view::npos) return cut;
  }
  return 0;
}

// How much of a fully re-decoded text to hold back: trailing spaces and U+FFFD (which
// more ids may still change) plus a few characters for decoders that rewrite the end.
size_t FallbackStableBytes(std::string_view text) {
  std::string_view stable = TrimJsWhitespaceEnd(text);
  while (EndsWithReplacement(stable)) stable.remove_suffix(kReplacementUtf8.size());
  size_t end = stable.size() > kMaxCleanUpSpanBytes ? stable.size() - kMaxCleanUpSpanBytes : 0;
  while (end > 0 && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) --end;
  return end;
}

}  // namespace

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : state_(*tokenizer.state_),
      skip_special_tokens_(skip_special_tokens),
      windowed_(tokenizer.state_->StreamsByWindow()) {}

std::string IncrementalDecoder::Add(int32_t id) {
  if (!state_.Visible(id, skip_special_tokens_)) return "";
  ids_.push_back(id);
  return windowed_ ? AddWindowed() : AddFallback(false);
}

std::string IncrementalDecoder::AddWindowed() {
  std::span<const int32_t> window(ids_.data() + prefix_, ids_.size() - prefix_);
  bool incomplete_tail = false;
  std::string text = state_.DecodeVisible(window, &incomplete_tail);
  // An incomplete character decodes as a trailing U+FFFD: wait for the rest of it.
  if (incomplete_tail || text.size() < prefix_text_bytes_) return "";
  std::string fresh = text.substr(prefix_text_bytes_);
  // The ids just emitted start the next window, unless they decode to nothing on their
  // own (then a leading-space rule could wrongly strip the next token's space).
  std::string emitted_window = state_.DecodeVisible(
      std::span<const int32_t>(ids_.data() + read_, ids_.size() - read_));
  if (!emitted_window.empty()) {
    prefix_ = read_;
    prefix_text_bytes_ = emitted_window.size();
  } else {
    prefix_text_bytes_ = text.size();
  }
  read_ = ids_.size();
  return Release(std::move(fresh), false);
}

std::string IncrementalDecoder::Release(std::string raw, bool flush) {
  if (!state_.clean_up_tokenization_spaces) return raw;
  held_raw_ += raw;
  size_t cut = flush ? held_raw_.size() : SafeCleanUpCut(held_raw_);
  std::string out = state_.CleanUp(std::string_view(held_raw_).substr(0, cut));
  held_raw_.erase(0, cut);
  return out;
}

std::string IncrementalDecoder::AddFallback(bool flush) {
  std::string full = state_.FinishDecode(state_.DecodeVisible(ids_), skip_special_tokens_);
  size_t stable = flush ? full.size() : FallbackStableBytes(full);
  // A decoder that rewrote text already returned cannot be undone; return only new text.
  if (stable <= emitted_.size() || full.compare(0, emitted_.size(), emitted_) != 0) return "";
  std::string fresh = full.substr(emitted_.size(), stable - emitted_.size());
  emitted_ += fresh;
  return fresh;
}

std::string IncrementalDecoder::Flush() {
  if (!windowed_) return AddFallback(true);
  std::string rest;
  if (read_ < ids_.size()) {
    std::string text = state_.DecodeVisible(
        std::span<const int32_t>(ids_.data() + prefix_, ids_.size() - prefix_));
    if (text.size() > prefix_text_bytes_) rest = text.substr(prefix_text_bytes_);
    prefix_ = read_ = ids_.size();
    prefix_text_bytes_ = 0;
  }
  return Release(std::move(rest), true);
}

}  // namespace surge
