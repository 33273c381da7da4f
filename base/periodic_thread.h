// PeriodicThread: one thread that runs a task again and again until stopped, waiting between
// runs for as long as the task asks, waking early on Wake() and at once on Stop(). The one place
// the thread-with-a-stop-flag-and-a-condition-variable loop is written.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace surge {

class PeriodicThread {
 public:
  using Duration = std::chrono::steady_clock::duration;
  // Runs on the thread; returns how long to wait before the next run.
  using Task = std::function<Duration()>;

  PeriodicThread() = default;
  ~PeriodicThread();  // Stop()
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread: the first run after `first_wait` (or a Wake()), each next one after the
  // wait the previous run returned (or a Wake()). At most once per object.
  void Start(Task task, Duration first_wait = Duration::zero());
  // The same with a fixed wait between runs.
  void Start(Duration interval, std::function<void()> task, Duration first_wait = Duration::zero());
  // The next run starts now, or as soon as the one in progress ends. Thread-safe.
  void Wake();
  // No run starts after this; joins the thread (a run in progress finishes first). Idempotent;
  // not from the task itself.
  void Stop();
  // For the task's own waits (a retry's backoff): waits up to `wait`; false once Stop() was
  // called (at once, then). Thread-safe.
  bool SleepFor(Duration wait);
  bool stopping() const;

 private:
  void Run(Task task, Duration first_wait);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  bool woken_ = false;     // guarded by mu_
  std::thread thread_;
};

}  // namespace surge
