#include "router/cache/semantic_request.h"

#include <nlohmann/json.hpp>

#include "router/cache/cache_request.h"
#include "router/cache/semantic_guard.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

// The text of a message's content: a string, or text parts joined by newlines; nullopt
// when a part is not text (an image, audio, a file).
std::optional<std::string> ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return std::nullopt;
  std::string text;
  for (const Json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string()) {
      return std::nullopt;
    }
    text += (text.empty() ? "" : "\n") + part["text"].get<std::string>();
  }
  return text;
}

const Json* LastMessage(const Json& body) {
  auto messages = body.find("messages");
  if (messages == body.end() || !messages->is_array() || messages->empty()) return nullptr;
  return &messages->back();
}

}  // namespace

const char* SemanticIneligibleReason(std::string_view path, const Json& body) {
  if (path != "/v1/chat/completions" || !body.is_object()) return "not_chat";
  const Json* last = LastMessage(body);
  if (last == nullptr) return "empty";
  if (!last->is_object() || last->value("role", "") != "user") return "last_not_user";
  if (body.contains("tools") || body.contains("functions")) return "tools";
  auto content = last->find("content");
  if (content == last->end()) return "empty";
  std::optional<std::string> text = ContentText(*content);
  if (!text) return "multimodal";
  return NormalizeQueryText(*text).empty() ? "empty" : nullptr;
}

std::optional<SemanticQuery> SemanticQueryFor(std::string_view tenant, std::string_view path, const Json& body,
                                              std::string_view client_model) {
  if (SemanticIneligibleReason(path, body) != nullptr) return std::nullopt;
  Json rest = body;
  Json& last = rest["messages"].back();
  SemanticQuery query;
  query.text = CollapseWhitespace(*ContentText(last["content"]));
  query.embed_input = NormalizeQueryText(query.text);
  last["content"] = "";
  // "semantic:" keeps a scope digest from ever equalling an exact key.
  std::optional<std::string> digest = ExactCacheKey("semantic:" + std::string(tenant), path, rest, client_model);
  if (!digest) return std::nullopt;
  query.scope = {std::string(tenant), std::move(*digest)};
  query.model = std::string(client_model);
  if (auto model = body.find("model"); query.model.empty() && model != body.end() && model->is_string()) {
    query.model = model->get<std::string>();
  }
  return query;
}

}  // namespace surge::router
