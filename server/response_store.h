// ResponseStore: the Responses API's stored responses, for GET /v1/responses/{id} and
// previous_response_id -- in memory, bounded in entries, the least recently used dropped
// first (a restart forgets them; OpenAI keeps them 30 days, which a gateway's durable
// store is for). Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>

#include "api/field_reader.h"
#include "base/lru_map.h"

namespace surge {

struct StoredResponse {
  api::Json response;      // the response object as it was returned
  api::Json conversation;  // chat messages a follow-up continues (api::ConversationAfter)
};

class ResponseStore {
 public:
  explicit ResponseStore(size_t max_entries) : entries_(max_entries) {}

  void Put(const std::string& id, StoredResponse response) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.Put(id, std::move(response));
  }
  std::optional<StoredResponse> Get(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    StoredResponse* found = entries_.Find(id);
    return found ? std::optional(*found) : std::nullopt;
  }
  bool Delete(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.Erase(id);
  }

 private:
  std::mutex mu_;
  LruMap<std::string, StoredResponse> entries_;  // guarded by mu_
};

}  // namespace surge
