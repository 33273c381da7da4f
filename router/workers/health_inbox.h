// HealthInbox: /health answers handed from the HTTP client's io thread to the supervisor's
// thread, with an eventfd that wakes the supervisor's poll. Internal to router/workers.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace surge::router::internal {

// Health answers arrive on the HTTP client's io thread; they are queued here and the loop
// woken, so that the io thread never waits for the supervisor's lock.
struct HealthInbox {
  struct Result {
    int64_t spawn_id;
    bool healthy;
  };
  HealthInbox();
  ~HealthInbox();
  void Push(Result result);
  std::vector<Result> TakeAll();
  void Wake() const;
  void DrainWake() const;

  int wake_fd = -1;  // eventfd
  std::mutex mu;
  std::vector<Result> results;
};

}  // namespace surge::router::internal
