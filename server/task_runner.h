// TaskRunner: a few worker threads that run the server's CPU work — parsing, chat
// templates, tokenization and turning engine output into JSON — so that neither the
// HTTP io thread nor the engine thread ever does it.
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
