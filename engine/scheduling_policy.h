// SchedulingPolicy: the scheduler's two choices that depend on what matters more --
// which waiting sequence to admit next and which running sequence to preempt. FCFS here;
// a priority policy with aging plugs in without touching the scheduler.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <span>

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

}  // namespace surge
