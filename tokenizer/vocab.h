// Vocab: the token <-> id maps of one tokenizer, model vocabulary and added tokens together.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace surge {

// Lets unordered maps keyed by std::string be probed with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
};

template <typename Value>
using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

struct Vocab {
  std::vector<std::string> id_to_token;  // [num_ids]; "" for ids that name no token
  std::vector<uint8_t> has_token;        // [num_ids]; 1 where id_to_token is a real token
  StringMap<int32_t> token_to_id;

  int32_t size() const { return static_cast<int32_t>(id_to_token.size()); }
  std::optional<int32_t> Find(std::string_view token) const {
    auto it = token_to_id.find(token);
    if (it == token_to_id.end()) return std::nullopt;
    return it->second;
  }
  // Adds or overrides `token` <-> `id` (an added token replaces a vocabulary entry of the
  // same content, as both reference implementations do).
  void Set(const std::string& token, int32_t id) {
    if (id >= size()) {
      id_to_token.resize(id + 1);
      has_token.resize(id + 1, 0);
    }
    id_to_token[id] = token;
    has_token[id] = 1;
    token_to_id[token] = id;
  }
};

}  // namespace surge
