// TierAdmission: the router's own queue in front of one pool -- a concurrency limit and
// bounded per-tier FIFO queues, drained by weighted fair sharing (stride scheduling).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "router/tiers/tier.h"

namespace surge::router {

// One request's place in tier admission, from Admit to Release or Cancel. A type of its
// own, so that it is never mixed up with another id or a count; kNoTicket: none.
enum class TicketId : uint64_t {};
inline constexpr TicketId kNoTicket{0};

struct TierAdmissionOptions {
  int32_t num_slots = 16;  // concurrent requests admitted to the pool (its capacity); >= 0
  // Per tier (indexed by TierIndex): at most this many wait; 0 = never queue, refuse at once.
  std::array<int32_t, kNumTiers> max_queued = {256, 256, 1024};
  // Shares of freed slots while tiers are backlogged; each >= 1.
  std::array<int32_t, kNumTiers> weights = {10, 5, 1};
  // Milliseconds on a monotonic clock; injected so that tests run in virtual time.
  std::function<int64_t()> now_ms;
  // Assumed time a request holds a slot until releases have measured it (Retry-After).
  int64_t initial_hold_ms = 1000;
};

// InvalidArgument naming the field ("num_slots", "max_queued.batch", "weights.realtime").
Status ValidateTierAdmissionOptions(const TierAdmissionOptions& options);

// Thread-safe. No thread blocks per queued request: a queued ticket is handed its slot
// through its callback, which runs on the thread whose Release / SetNumSlots freed the slot,
// after the lock is dropped (so it may call back into this object; it should not block --
// post to the connection's executor).
class TierAdmission {
 public:
  // Called once when a queued ticket gets its slot; never for a ticket admitted at once or
  // cancelled first.
  using AdmitCallback = std::function<void(TicketId)>;

  struct AdmitResult {
    Status status;                // OK, or RESOURCE_EXHAUSTED when the tier's queue is full
    TicketId ticket = kNoTicket;  // when OK
    bool admitted = false;        // true: holds a slot now (no callback will come); false: queued
    int64_t retry_after_s = 0;    // when RESOURCE_EXHAUSTED: >= 1, an estimate for Retry-After
  };

  explicit TierAdmission(TierAdmissionOptions options);  // CHECKs ValidateTierAdmissionOptions

  AdmitResult Admit(Tier tier, AdmitCallback on_admitted);
  // Removes a queued ticket (client gone): true when it was queued; its callback never runs.
  // False when it already holds a slot (or its callback is under way): Release it then.
  bool Cancel(TicketId ticket);
  // The request that held the slot finished; the slot goes to the next ticket by weight.
  // Releasing a ticket that holds no slot is a bug (CHECK).
  void Release(TicketId ticket);
  // The pool's capacity changed (a backend joined or left): more slots admit waiters now;
  // fewer take effect as requests finish.
  void SetNumSlots(int32_t num_slots);

  int32_t num_slots() const;
  int32_t num_in_use() const;
  int32_t QueueDepth(Tier tier) const;  // for the per-tier queue-depth gauge
  struct TierCounts {
    uint64_t num_admitted = 0;  // at once or from the queue
    uint64_t num_rejected = 0;  // queue full
    uint64_t num_cancelled = 0;
  };
  TierCounts Counts(Tier tier) const;

 private:
  struct Waiter {
    TicketId ticket;
    AdmitCallback on_admitted;
  };
  struct TierQueue {
    std::list<Waiter> waiters;  // FIFO
    uint64_t pass = 0;          // stride scheduling: the next admission's virtual time
    uint64_t stride = 0;        // kStrideScale / weight
    TierCounts counts;
  };
  struct Admitted {
    int64_t admitted_ms = 0;
  };
  using Ready = std::vector<std::pair<AdmitCallback, TicketId>>;

  // Grants free slots to waiters (by weight); returns their callbacks to run unlocked.
  Ready FillSlotsLocked();
  int PickTierLocked() const;  // the backlogged tier with the smallest pass; -1 when none
  void GrantLocked(TicketId ticket, int tier);
  int64_t RetryAfterLocked(int tier) const;
  static void RunReady(Ready ready);

  const TierAdmissionOptions options_;
  mutable std::mutex mu_;
  int32_t num_slots_;
  std::array<TierQueue, kNumTiers> queues_;
  // Where each queued ticket waits, for O(1) Cancel.
  std::unordered_map<TicketId, std::pair<int, std::list<Waiter>::iterator>> queued_;
  std::unordered_map<TicketId, Admitted> admitted_;
  uint64_t virtual_time_ = 0;  // the pass of the last admission from a queue
  uint64_t next_ticket_ = 1;  // the next TicketId
  double mean_hold_ms_;        // EWMA of slot hold times, for Retry-After
};

}  // namespace surge::router
