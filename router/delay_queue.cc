#include "router/delay_queue.h"

namespace surge::router {

DelayQueue::DelayQueue() : thread_([this] { Loop(); }) {}

DelayQueue::~DelayQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void DelayQueue::After(int64_t delay_ms, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push({Clock::now() + std::chrono::milliseconds(delay_ms), next_order_++, std::move(task)});
  }
  wake_.notify_one();
}

void DelayQueue::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (tasks_.empty()) {
      if (stop_) return;
      wake_.wait(lock);
      continue;
    }
    const Clock::time_point when = tasks_.top().when;
    if (!stop_ && Clock::now() < when) {
      wake_.wait_until(lock, when);
      continue;
    }
    std::function<void()> run = tasks_.top().run;
    tasks_.pop();
    lock.unlock();
    run();
    lock.lock();
  }
}

}  // namespace surge::router
