#include "engine/request_queue.h"

#include <string>
#include <utility>

namespace surge {

RequestQueue::RequestQueue(int32_t max_waiting) : max_waiting_(max_waiting) {}

Status RequestQueue::Push(std::unique_ptr<RequestState> request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return UnavailableError("the engine is shutting down");
    const int64_t num_waiting = static_cast<int64_t>(requests_.size()) + stats_.num_waiting;
    if (num_waiting >= max_waiting_) {
      return ResourceExhaustedError("the waiting queue is full (max_waiting " +
                                    std::to_string(max_waiting_) + " requests)");
    }
    requests_.push_back(std::move(request));
  }
  cv_.notify_one();
  return OkStatus();
}

void RequestQueue::Cancel(RequestId id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(id);
  }
  cv_.notify_one();
}

bool RequestQueue::Take(bool wait, std::vector<std::unique_ptr<RequestState>>& requests,
                        std::vector<RequestId>& cancels) {
  requests.clear();
  cancels.clear();
  std::unique_lock<std::mutex> lock(mu_);
  if (wait) cv_.wait(lock, [&] { return closed_ || !requests_.empty() || !cancels_.empty(); });
  requests.swap(requests_);
  cancels.swap(cancels_);
  // Taken requests wait in the scheduler now; count them until the next published stats.
  stats_.num_waiting += static_cast<int32_t>(requests.size());
  return !closed_;
}

void RequestQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

void RequestQueue::PublishStats(const EngineStats& stats) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_ = stats;
}

EngineStats RequestQueue::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  EngineStats stats = stats_;
  stats.num_waiting += static_cast<int32_t>(requests_.size());
  return stats;
}

}  // namespace surge
