// RequestDeadlines: the deadlines of the requests that have one (EngineRequest::timeout_s)
// as a min-heap of (deadline in the engine's clock seconds, id), so that a step with
// nothing due costs one comparison. Engine-thread state.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "engine/engine_client.h"

namespace surge {

class RequestDeadlines {
 public:
  bool empty() const { return heap_.empty(); }
  void Add(double deadline_s, RequestId id);

  // Appends to `due` the ids whose deadline is <= now_s, earliest first, and forgets them.
  // Entries of requests that finished first wait for their time (the caller skips ids it
  // no longer knows); past twice `num_live` plus a margin, those `live` denies are swept
  // (amortized O(1) per request), so long timeouts never pile up.
  void TakeDue(double now_s, size_t num_live, const std::function<bool(RequestId)>& live,
               std::vector<RequestId>& due);

 private:
  std::vector<std::pair<double, RequestId>> heap_;  // min-heap on the deadline
};

}  // namespace surge
