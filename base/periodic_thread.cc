#include "base/periodic_thread.h"

#include <algorithm>

#include "base/check.h"

namespace surge {

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Start(Task task, Duration first_wait) {
  CHECK(!thread_.joinable()) << "PeriodicThread::Start called twice";
  thread_ = std::thread([this, task = std::move(task), first_wait] { Run(task, first_wait); });
}

void PeriodicThread::Start(Duration interval, std::function<void()> task, Duration first_wait) {
  Start(
      [interval, task = std::move(task)] {
        task();
        return interval;
      },
      first_wait);
}

void PeriodicThread::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void PeriodicThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PeriodicThread::SleepFor(Duration wait) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, wait, [this] { return stopping_; });
}

bool PeriodicThread::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void PeriodicThread::Run(Task task, Duration first_wait) {
  Duration wait = first_wait;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Capped: steady_clock's now() + a huge wait would overflow.
    cv_.wait_for(lock, std::min<Duration>(wait, std::chrono::hours(24)), [this] { return stopping_ || woken_; });
    if (stopping_) return;
    woken_ = false;
    lock.unlock();
    wait = task();
    lock.lock();
  }
}

}  // namespace surge
