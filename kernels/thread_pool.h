// ThreadPool: persistent workers that split a loop of independent items with the caller.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace surge {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread too: ThreadPool(1) starts no worker and runs
  // everything inline. <= 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) on disjoint ranges covering [0, num_items), from the workers and
  // the calling thread, and returns when all are done. Ranges are claimed dynamically in
  // chunks of `items_per_chunk` (default: about 4 chunks per thread), so a range's thread
  // is arbitrary: fn must not depend on which thread runs it. No allocation per call: fn
  // is passed by address, never wrapped in a std::function. A call from inside fn runs
  // inline (no nested parallelism); calls from several outside threads take turns.
  template <typename Fn>
  void ParallelFor(int64_t num_items, Fn&& fn) {
    ParallelFor(num_items, DefaultChunk(num_items), std::forward<Fn>(fn));
  }
  template <typename Fn>
  void ParallelFor(int64_t num_items, int64_t items_per_chunk, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    ChunkFn invoke = [](const void* ctx, int64_t begin, int64_t end) {
      (*static_cast<F*>(const_cast<void*>(ctx)))(begin, end);
    };
    Run(num_items, items_per_chunk, invoke, &fn);
  }

 private:
  using ChunkFn = void (*)(const void* ctx, int64_t begin, int64_t end);
  // The loop being run; written only while no worker is busy.
  struct Job {
    ChunkFn fn = nullptr;
    const void* ctx = nullptr;
    int64_t num_items = 0;
    int64_t items_per_chunk = 1;
  };

  int64_t DefaultChunk(int64_t num_items) const;
  void Run(int64_t num_items, int64_t items_per_chunk, ChunkFn fn, const void* ctx);
  void RunChunks();
  void WorkerLoop();
  // Waits (spinning briefly, then sleeping) until the generation moves past `seen`.
  // Returns false when the pool is stopping.
  bool WaitForJob(uint64_t seen);

  const int num_threads_;
  Job job_;
  std::atomic<int64_t> next_item_{0};
  std::atomic<int> num_busy_workers_{0};
  std::atomic<uint64_t> generation_{0};  // bumped once per published job
  std::atomic<bool> stopping_{false};
  std::mutex wake_mu_;  // pairs with wake_cv_ so no wake-up is lost
  std::condition_variable wake_cv_;
  std::mutex run_mu_;  // one job at a time
  std::vector<std::thread> workers_;
};

}  // namespace surge
