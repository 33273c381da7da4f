// What the semantic cache reads from a request: whether it is eligible, its scope (the
// tenant plus a digest of everything that shapes the answer except the last user message)
// and its query text (that message). router/cache/README.md: "Semantic cache".
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "router/cache/semantic_index.h"

namespace surge::router {

struct SemanticQuery {
  SemanticScope scope;
  std::string text;         // the last user message, whitespace collapsed (what the guard reads)
  std::string embed_input;  // NormalizeQueryText(text): what is embedded
  std::string model;        // the client's model name: per-model opt-in and threshold
};

// Why `body` (already found cacheable, on `path`) has no semantic lookup, or nullptr when it
// has: "not_chat" (not /v1/chat/completions), "last_not_user" (the last message is not the
// user's, e.g. a tool result), "tools" (tools or functions offered: a call's arguments hang
// on exact wording), "multimodal" (a content part that is not text), "empty" (no text).
const char* SemanticIneligibleReason(std::string_view path, const nlohmann::json& body);

// The query for an eligible body (SemanticIneligibleReason null), nullopt otherwise. The
// scope digest is ExactCacheKey's over the body with the last message's content emptied,
// so the system prompt, earlier turns, model and every output-changing parameter count,
// and nothing outside the exact key does.
std::optional<SemanticQuery> SemanticQueryFor(std::string_view tenant, std::string_view path,
                                              const nlohmann::json& body, std::string_view client_model);

}  // namespace surge::router
