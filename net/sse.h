// Server-Sent Events: encoding events for streaming responses, and an incremental parser
// for the client side (WHATWG HTML "event stream" interpretation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/http_types.h"

namespace surge::net {

struct SseEvent {
  std::string event;  // event type; empty means the default, "message"
  std::string data;   // lines joined with '\n'
  std::string id;     // last event id in effect (it persists across events, per spec)
  std::optional<int64_t> retry_ms;  // a "retry:" field inside this event block

  bool operator==(const SseEvent&) const = default;
};

// "event: x\nid: y\ndata: line1\ndata: line2\n\n". Data is split on \n, \r\n and \r so
// that a newline inside the data never ends the event early.
std::string EncodeSseEvent(const SseEvent& event);
// "data: <data>\n\n": the common case (OpenAI streams are data-only).
std::string EncodeSseData(std::string_view data);
// ": <text>\n\n": a comment that clients ignore; a heartbeat that keeps proxies from
// timing out an idle stream.
std::string EncodeSseComment(std::string_view text);
// Response headers for an event stream: text/event-stream, no caching, no proxy buffering.
HttpHeaders SseHeaders();

// Feed it bytes as they arrive (split anywhere, even inside "\r\n"); it returns the
// events they complete. Handles \n, \r\n and \r line ends, comments, a leading BOM.
class SseParser {
 public:
  explicit SseParser(size_t max_event_bytes = 16 << 20) : max_event_bytes_(max_event_bytes) {}

  // Appends completed events to `events`. DATA_LOSS when one line or event passes
  // max_event_bytes (a broken or hostile server); the parser is then unusable.
  Status Feed(std::string_view bytes, std::vector<SseEvent>* events);

 private:
  void ProcessLine(std::string_view line, std::vector<SseEvent>* events);
  void Dispatch(std::vector<SseEvent>* events);

  size_t max_event_bytes_;
  std::string line_;         // a line not yet terminated, carried across Feed calls
  bool skip_lf_ = false;     // the previous byte was '\r': a '\n' right after it pairs with it
  bool at_stream_start_ = true;
  size_t bom_bytes_seen_ = 0;
  // The event being built.
  std::string data_;
  bool has_data_ = false;
  std::string event_type_;
  std::string last_event_id_;
  std::optional<int64_t> retry_ms_;
};

}  // namespace surge::net
