#include "kernels/thread_pool.h"

#include <algorithm>

#include "base/check.h"

namespace surge {
namespace {

// Workers spin this many rounds between jobs before sleeping: the dozens of loops in
// one forward pass then start without a futex wake-up each.
constexpr int kSpinRounds = 20000;
constexpr int kSpinRoundsBeforeYield = 2000;

// True on pool worker threads: a ParallelFor from inside a task runs inline.
thread_local bool t_in_pool_task = false;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int ResolveNumThreads(int num_threads) {
  if (num_threads > 0) return num_threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(ResolveNumThreads(num_threads)) {
  workers_.reserve(num_threads_ - 1);
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    stopping_.store(true);
    generation_.fetch_add(1);
  }
  wake_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

int64_t ThreadPool::DefaultChunk(int64_t num_items) const {
  int64_t num_chunks = 4 * static_cast<int64_t>(num_threads_);
  return std::max<int64_t>(1, (num_items + num_chunks - 1) / num_chunks);
}

void ThreadPool::Run(int64_t num_items, int64_t items_per_chunk, ChunkFn fn, const void* ctx) {
  if (num_items <= 0) return;
  items_per_chunk = std::max<int64_t>(1, items_per_chunk);
  if (workers_.empty() || t_in_pool_task || num_items <= items_per_chunk) {
    fn(ctx, 0, num_items);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  job_ = Job{fn, ctx, num_items, items_per_chunk};
  next_item_.store(0, std::memory_order_relaxed);
  num_busy_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_cv_.notify_all();
  t_in_pool_task = true;
  RunChunks();
  t_in_pool_task = false;
  // Every worker checks in before the next job may overwrite job_.
  for (int round = 0; num_busy_workers_.load(std::memory_order_acquire) != 0; ++round) {
    if (round < kSpinRoundsBeforeYield) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::RunChunks() {
  const Job& job = job_;
  while (true) {
    int64_t begin = next_item_.fetch_add(job.items_per_chunk, std::memory_order_relaxed);
    if (begin >= job.num_items) return;
    job.fn(job.ctx, begin, std::min(job.num_items, begin + job.items_per_chunk));
  }
}

bool ThreadPool::WaitForJob(uint64_t seen) {
  for (int round = 0; round < kSpinRounds; ++round) {
    if (generation_.load(std::memory_order_acquire) != seen) return !stopping_.load();
    if (round < kSpinRoundsBeforeYield) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> lock(wake_mu_);
  wake_cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
  return !stopping_.load();
}

void ThreadPool::WorkerLoop() {
  t_in_pool_task = true;
  uint64_t seen = 0;
  while (true) {
    if (!WaitForJob(seen)) return;
    seen = generation_.load(std::memory_order_acquire);
    RunChunks();
    num_busy_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace surge
