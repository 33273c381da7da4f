// TaskRunner: a few worker threads fed by one queue, so that a thread that must not block
// (an HTTP io thread, the engine thread) hands its CPU or disk work to them: the server's
// parsing, templates and JSON; the Batch API's SQLite and file I/O.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace surge {

class TaskRunner {
 public:
  explicit TaskRunner(int num_threads);
  ~TaskRunner();  // Stop()
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Thread-safe and quick (one lock, one push): safe from the engine and io threads.
  // False once stopped; the task is then dropped.
  bool Post(std::function<void()> task);
  // Runs what is queued, then joins the workers. Idempotent.
  void Stop();

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace surge
