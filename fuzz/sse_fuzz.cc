// libFuzzer target: the client's Server-Sent Events parser (net/sse.h), fed in pieces as
// a streamed response body arrives.
//
// Input: byte 0 % 8 is how many piece-length bytes follow (0: the stream arrives whole);
// they give the lengths of successive Feed calls, cycled, each byte b meaning b + 1
// bytes. The rest is the event stream. Seeds in fuzz/corpus/sse start with "\0".
//
// Oracles besides crashes and sanitizer reports: the stream fed in pieces gives the same
// events and the same error as fed whole (even a split "\r\n" or BOM), and no event's
// fields pass max_event_bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "net/sse.h"

namespace {

using surge::net::SseEvent;
using surge::net::SseParser;

constexpr size_t kMaxEventBytes = 1024;  // small, so that the limit is reached often

struct Outcome {
  std::vector<SseEvent> events;
  bool ok = true;
};

Outcome Parse(std::string_view stream, std::span<const uint8_t> lengths) {
  SseParser parser(kMaxEventBytes);
  Outcome outcome;
  size_t offset = 0;
  for (size_t i = 0; offset < stream.size(); ++i) {
    size_t length = lengths.empty() ? stream.size() : lengths[i % lengths.size()] + size_t{1};
    length = std::min(length, stream.size() - offset);
    outcome.ok = parser.Feed(stream.substr(offset, length), &outcome.events).ok();
    offset += length;
    if (!outcome.ok) break;  // the parser is unusable after an error
  }
  for (const SseEvent& event : outcome.events) {
    CHECK(event.data.size() <= kMaxEventBytes) << event.data.size();
    CHECK(event.event.size() <= kMaxEventBytes) << event.event.size();
    CHECK(event.id.size() <= kMaxEventBytes) << event.id.size();
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t num_lengths = std::min<size_t>(data[0] % 8, size - 1);
  std::span<const uint8_t> lengths(data + 1, num_lengths);
  std::string_view stream(reinterpret_cast<const char*>(data) + 1 + num_lengths,
                          size - 1 - num_lengths);
  Outcome in_pieces = Parse(stream, lengths);
  if (num_lengths == 0) return 0;
  Outcome whole = Parse(stream, {});
  CHECK(in_pieces.ok == whole.ok);
  CHECK(in_pieces.events == whole.events) << in_pieces.events.size() << " events in pieces, "
                                          << whole.events.size() << " whole";
  return 0;
}
