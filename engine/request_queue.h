// RequestQueue: the one lock between client threads and the engine thread. New requests
// and cancellations go in; the engine thread takes them at the start of each step (or
// sleeps here while idle) and leaves its latest EngineStats, which also bound the queue.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "engine/engine_client.h"
#include "engine/request_state.h"

namespace surge {

class RequestQueue {
 public:
  explicit RequestQueue(int32_t max_waiting);

  // ResourceExhausted when max_waiting requests are already waiting (queued here or
  // waiting in the scheduler, as of the last published stats): the server answers 429.
  // Unavailable once closed.
  Status Push(std::unique_ptr<RequestState> request);
  void Cancel(RequestId id);

  // Engine thread: replaces `requests` and `cancels` with everything queued. With `wait`,
  // sleeps first until something is queued or the queue closes. False once closed (the
  // outputs are still filled, so the caller can fail what was left).
  bool Take(bool wait, std::vector<std::unique_ptr<RequestState>>& requests,
            std::vector<RequestId>& cancels);
  // Wakes the engine thread for good; later pushes fail.
  void Close();

  void PublishStats(const EngineStats& stats);
  // The last published stats, with the requests queued here counted as waiting.
  EngineStats stats() const;

 private:
  const int32_t max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<RequestState>> requests_;  // guarded by mu_
  std::vector<RequestId> cancels_;                       // guarded by mu_
  EngineStats stats_;                                    // guarded by mu_
  bool closed_ = false;                                  // guarded by mu_
};

}  // namespace surge
