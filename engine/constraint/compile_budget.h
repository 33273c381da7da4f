// CompileBudget: how much work one constraint compile may do, so that no grammar -- however
// small its text -- holds a thread or memory for long. A step count (deterministic: the
// same grammar always stops at the same point), and optionally a deadline and a flag that
// cancels the compile (the server's: the request's timeout, a client that went away).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "base/status.h"

namespace surge {

class CompileBudget {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CompileBudget(int64_t max_steps) : max_steps_(max_steps) {}

  // Past `deadline` the compile stops with DeadlineExceeded.
  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; has_deadline_ = true; }
  // Once `*cancelled` is true the compile stops with Cancelled. Borrowed: must outlive it.
  void set_cancel_flag(const std::atomic<bool>* cancelled) { cancelled_ = cancelled; }

  // Adds `steps` of work. False once the budget is spent (then status() says why); the
  // clock and the flag are read every kCheckEvery steps, so the hot loops stay cheap.
  bool Spend(int64_t steps) {
    steps_ += steps;
    if (failure_ != Failure::kNone) return false;
    if (steps_ > max_steps_) return Fail(Failure::kSteps);
    if (steps_ < next_check_) return true;
    next_check_ = steps_ + kCheckEvery;
    return CheckClock();
  }
  // Reads the clock and the flag now (for a caller that waits instead of working): false
  // once the deadline has passed or the flag is set.
  bool CheckNow() { return failure_ == Failure::kNone && CheckClock(); }
  bool exhausted() const { return failure_ != Failure::kNone; }
  int64_t steps() const { return steps_; }
  // OK while not exhausted; else ResourceExhausted (steps), DeadlineExceeded or Cancelled,
  // each saying which bound stopped the compile.
  Status status() const;

 private:
  enum class Failure { kNone, kSteps, kDeadline, kCancelled };
  static constexpr int64_t kCheckEvery = 1 << 14;

  bool Fail(Failure failure) {
    failure_ = failure;
    return false;
  }
  bool CheckClock();

  const int64_t max_steps_;
  int64_t steps_ = 0;
  int64_t next_check_ = 0;
  bool has_deadline_ = false;
  Clock::time_point deadline_{};
  const std::atomic<bool>* cancelled_ = nullptr;
  Failure failure_ = Failure::kNone;
};

}  // namespace surge
