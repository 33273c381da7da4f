// The exact cache's stored form of one answer and its two replays. An entry is the answer
// without what is per-response (id, created): {"object", "model", ["system_fingerprint"],
// "choices": [whole-response choices], "usage" (null when the stream that made it carried
// none)}. From it the router answers a later request whole (the chat.completion /
// text_completion object) or as a stream (chat.completion.chunk / text_completion chunks:
// per choice a role chunk (chat), one delta with all its text, its tool calls, a finish
// chunk; the usage chunk when asked; then [DONE]) -- the shapes `surge serve` sends.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace surge::router {

using OrderedJson = nlohmann::ordered_json;

// Finish reasons of an answer that completed normally (stored); anything else (null, an
// error, a timeout, an abort) is not.
bool IsCompletedFinishReason(const OrderedJson& finish_reason);

// The entry for a whole 200 answer; nullopt when it is not one to store (not JSON, no
// choices, a choice that did not complete normally).
std::optional<std::string> EntryFromWholeResponse(std::string_view body);
// The entry for the parts of an answer (the stream assembler's output): the same checks.
std::optional<std::string> EntryFromParts(const OrderedJson& envelope, OrderedJson choices, OrderedJson usage);

struct ReplayMeta {
  std::string id;    // fresh per response: "chatcmpl-..." / "cmpl-..."
  int64_t created;   // unix seconds, now
};
// A fresh id for the entry's object and the current time.
ReplayMeta NewReplayMeta(std::string_view entry_object);

// What a hit needs from an entry, parsed once.
struct CachedResponse {
  OrderedJson entry;
  bool chat() const;
  bool has_usage() const { return entry.contains("usage") && entry["usage"].is_object(); }
};
std::optional<CachedResponse> ParseCachedResponse(std::string_view entry);

// Usage on a hit: the whole prompt counts as cached (usage.prompt_tokens_details.cached_tokens
// = prompt_tokens): no engine computed anything.
OrderedJson CachedUsage(const OrderedJson& usage);
// The whole answer (needs has_usage()).
std::string ReplayWhole(const CachedResponse& cached, const ReplayMeta& meta);
// The stream's data payloads in order, "[DONE]" last (include_usage needs has_usage()).
std::vector<std::string> ReplayStream(const CachedResponse& cached, const ReplayMeta& meta, bool include_usage);

}  // namespace surge::router
