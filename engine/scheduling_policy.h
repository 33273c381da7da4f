// SchedulingPolicy: the scheduler's two choices that depend on what matters more --
// which waiting sequence to admit next and which running sequence to preempt. FCFS, and
// priorities with aging (no starvation), plug in without touching the scheduler.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string_view>

#include "base/status.h"
#include "engine/sequence.h"

namespace surge {

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  // Index in `waiting` (never empty) of the sequence to admit next. `waiting` is in
  // arrival order, with preempted sequences put back at the front.
  virtual size_t PickNextWaiting(const std::deque<Sequence*>& waiting) const = 0;
  // Index in `running` (never empty; in admission order) of the sequence to preempt when
  // a running sequence cannot get blocks. May be that sequence itself.
  virtual size_t PickVictim(std::span<Sequence* const> running) const = 0;
};

// First come, first served: admit the head of the queue; preempt the most recently
// admitted sequence (vLLM's recompute order), so the oldest always makes progress.
class FcfsPolicy : public SchedulingPolicy {
 public:
  size_t PickNextWaiting(const std::deque<Sequence*>& waiting) const override { return 0; }
  size_t PickVictim(std::span<Sequence* const> running) const override {
    return running.size() - 1;
  }
};

// Priorities with aging. A sequence's effective priority is
//   priority - waited_seconds / aging_seconds
// (lower is more urgent): every `aging_seconds` of waiting is worth one priority level.
// All sequences age at the same rate, so their order never changes while they wait; it is
// the order of the static key  arrival_time_s + priority * aging_seconds  (a virtual
// deadline), which needs no clock. Admission takes the smallest key (ties: queue order);
// preemption takes the largest key, ties to the most recently admitted.
//
// No starvation: a request R with priority p arriving at t is ranked ahead of every
// request arriving after t + (p - p_min) * aging_seconds, where p_min is the most urgent
// priority in use (realtime, -10, against batch, +10, with the default 1 s: 20 s). Only
// the finitely many requests that arrive before then can overtake R, so R is admitted
// once they are served. The running sequence with the smallest key is never a victim
// while another runs, so it always progresses (as FCFS's oldest).
class PriorityPolicy : public SchedulingPolicy {
 public:
  explicit PriorityPolicy(double aging_seconds) : aging_seconds_(aging_seconds) {}
  double Key(const Sequence& seq) const { return seq.arrival_time_s + seq.priority * aging_seconds_; }
  size_t PickNextWaiting(const std::deque<Sequence*>& waiting) const override;
  size_t PickVictim(std::span<Sequence* const> running) const override;

 private:
  double aging_seconds_;
};

enum class SchedulingPolicyKind { kFcfs, kPriority };
// "fcfs" or "priority"; InvalidArgument naming the value otherwise.
StatusOr<SchedulingPolicyKind> ParseSchedulingPolicy(std::string_view name);
std::unique_ptr<SchedulingPolicy> MakeSchedulingPolicy(SchedulingPolicyKind kind, double aging_seconds);

}  // namespace surge
