// DelayQueue: runs tasks at a later time on one thread of its own -- the router's retry
// back-off, so that a waiting retry holds no io thread and no lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace surge::router {

class DelayQueue {
 public:
  DelayQueue();
  // Tasks not yet due are run at once (in order), so that nothing waiting on them hangs.
  ~DelayQueue();
  DelayQueue(const DelayQueue&) = delete;
  DelayQueue& operator=(const DelayQueue&) = delete;

  // Runs `task` on the queue's thread after `delay_ms` (0: as soon as possible). Tasks must
  // not block: they only start work elsewhere.
  void After(int64_t delay_ms, std::function<void()> task);

 private:
  using Clock = std::chrono::steady_clock;
  struct Task {
    Clock::time_point when;
    uint64_t order;
    std::function<void()> run;
    bool operator>(const Task& other) const { return when != other.when ? when > other.when : order > other.order; }
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<Task, std::vector<Task>, std::greater<>> tasks_;  // guarded by mu_
  uint64_t next_order_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace surge::router
