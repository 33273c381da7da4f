// PromptHasher: a request body -> the token ids `surge serve` would run for it -> the
// chained block hashes its prefix cache files them under. Uses the same request parser
// (api/), the same chat template rendering (tokenizer/jinja/chat_prompt.h) and the same
// tokenizer as the server, with the engine's block size and seed (GET /kv_config), so
// the hashes are the engine's own.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "router/prefix/kv_events.h"
#include "tokenizer/jinja/template.h"
#include "tokenizer/tokenizer.h"

namespace surge::router {

class PromptHasher {
 public:
  // `tokenizer` is borrowed. `chat_template` "" means the tokenizer's own, as for `surge
  // serve` (which takes --chat-template FILE the same way); none at all: chat requests
  // are refused. A template that does not parse is an error here.
  static StatusOr<PromptHasher> Create(const Tokenizer& tokenizer, const std::string& chat_template,
                                       const KvConfig& config);

  // The prompt of a POST to `path`: "/v1/completions" (its first prompt, when it has
  // several) or "/v1/chat/completions". InvalidArgument when the body is not a valid
  // request (the engine will refuse it too); Unimplemented for other paths.
  StatusOr<std::vector<int32_t>> PromptTokens(std::string_view path, std::string_view body) const;
  // The hashes of every full block of `token_ids` ([token_ids.size() / block_size]).
  std::vector<uint64_t> BlockHashes(std::span<const int32_t> token_ids) const;
  // PromptTokens, then BlockHashes.
  StatusOr<std::vector<uint64_t>> PromptBlockHashes(std::string_view path, std::string_view body) const;

  const KvConfig& config() const { return config_; }

 private:
  PromptHasher(const Tokenizer& tokenizer, std::optional<jinja::Template> chat_template, const KvConfig& config)
      : tokenizer_(&tokenizer), chat_template_(std::move(chat_template)), config_(config) {}
  StatusOr<std::vector<int32_t>> CompletionTokens(std::string_view body) const;
  StatusOr<std::vector<int32_t>> ChatTokens(std::string_view body) const;

  const Tokenizer* tokenizer_;
  std::optional<jinja::Template> chat_template_;
  KvConfig config_;
};

}  // namespace surge::router
