// StreamAssembler: the tee on a live SSE answer. Fed the bytes the router passes to the
// client, it rebuilds the whole answer (per choice: text, reasoning, tool calls, logprobs,
// finish reason; the usage chunk) so that a streamed request can fill the cache too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "net/sse.h"
#include "router/cache/cached_response.h"

namespace surge::router {

class StreamAssembler {
 public:
  // Past `max_bytes` of stream it gives up (nothing is stored).
  explicit StreamAssembler(size_t max_bytes) : max_bytes_(max_bytes) {}

  void Feed(std::string_view bytes);
  // The entry, when the stream ended with [DONE], had no error event and every choice
  // finished normally; nullopt otherwise.
  std::optional<std::string> Finish();

 private:
  struct Choice {
    std::string text;  // completion text or chat content
    std::optional<std::string> reasoning;
    std::map<int64_t, OrderedJson> tool_calls;  // by index: {"id", "type", "function": {"name", "arguments"}}
    OrderedJson logprobs;                        // merged; null while none came
    OrderedJson finish_reason;
  };
  void OnEvent(const std::string& data);
  void OnChunk(const OrderedJson& chunk);
  void OnChoice(const OrderedJson& delta_choice);
  OrderedJson WholeChoice(int64_t index, const Choice& choice) const;

  const size_t max_bytes_;
  size_t num_bytes_ = 0;
  bool failed_ = false;
  bool done_ = false;
  bool chat_ = false;
  net::SseParser parser_;
  OrderedJson envelope_;  // the first chunk's object, model, system_fingerprint
  OrderedJson usage_;
  std::map<int64_t, Choice> choices_;
};

}  // namespace surge::router
