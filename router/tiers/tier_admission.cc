#include "router/tiers/tier_admission.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "base/check.h"

namespace surge::router {
namespace {

// Stride scheduling works in integers: a tier's stride is kStrideScale / weight, so that
// the ratio of admissions between backlogged tiers equals the ratio of their weights.
constexpr uint64_t kStrideScale = uint64_t{1} << 32;
// How fast the hold-time estimate follows new measurements.
constexpr double kHoldEwmaAlpha = 0.05;
// Retry-After when nothing is being admitted (no slots): a client should come back later.
constexpr int64_t kMaxRetryAfterS = 3600;

}  // namespace

Status ValidateTierAdmissionOptions(const TierAdmissionOptions& options) {
  if (options.num_slots < 0) {
    return InvalidArgumentError("num_slots must be >= 0, got " + std::to_string(options.num_slots));
  }
  for (Tier tier : kAllTiers) {
    const int i = TierIndex(tier);
    if (options.max_queued[i] < 0) {
      return InvalidArgumentError(std::string("max_queued.") + TierName(tier) + " must be >= 0, got " +
                                  std::to_string(options.max_queued[i]));
    }
    if (options.weights[i] < 1) {
      return InvalidArgumentError(std::string("weights.") + TierName(tier) + " must be >= 1, got " +
                                  std::to_string(options.weights[i]));
    }
  }
  if (!options.now_ms) return InvalidArgumentError("now_ms: a clock is required");
  if (options.initial_hold_ms < 1) return InvalidArgumentError("initial_hold_ms must be >= 1");
  return OkStatus();
}

TierAdmission::TierAdmission(TierAdmissionOptions options)
    : options_(std::move(options)),
      num_slots_(options_.num_slots),
      mean_hold_ms_(static_cast<double>(options_.initial_hold_ms)) {
  const Status status = ValidateTierAdmissionOptions(options_);
  CHECK(status.ok()) << status.ToString();
  for (Tier tier : kAllTiers) {
    queues_[TierIndex(tier)].stride = kStrideScale / static_cast<uint64_t>(options_.weights[TierIndex(tier)]);
  }
}

TierAdmission::AdmitResult TierAdmission::Admit(Tier tier, AdmitCallback on_admitted) {
  std::lock_guard<std::mutex> lock(mu_);
  const int i = TierIndex(tier);
  TierQueue& queue = queues_[i];
  AdmitResult result;
  result.ticket = TicketId{next_ticket_++};
  // Free slots imply empty queues (FillSlotsLocked keeps it so): no one is overtaken.
  if (static_cast<int32_t>(admitted_.size()) < num_slots_) {
    admitted_[result.ticket] = Admitted{options_.now_ms()};
    ++queue.counts.num_admitted;
    result.admitted = true;
    return result;
  }
  if (static_cast<int32_t>(queue.waiters.size()) >= options_.max_queued[i]) {
    ++queue.counts.num_rejected;
    result.retry_after_s = RetryAfterLocked(i);
    result.status = ResourceExhaustedError(std::string("the ") + TierName(tier) +
                                           " queue is full (" + std::to_string(options_.max_queued[i]) +
                                           " waiting)");
    result.ticket = kNoTicket;
    return result;
  }
  // A tier that was idle joins at the current virtual time: idling earns no credit.
  if (queue.waiters.empty()) queue.pass = std::max(queue.pass, virtual_time_);
  queue.waiters.push_back(Waiter{result.ticket, std::move(on_admitted)});
  queued_[result.ticket] = {i, std::prev(queue.waiters.end())};
  return result;
}

bool TierAdmission::Cancel(TicketId ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = queued_.find(ticket);
  if (it == queued_.end()) return false;
  TierQueue& queue = queues_[it->second.first];
  queue.waiters.erase(it->second.second);
  ++queue.counts.num_cancelled;
  queued_.erase(it);
  return true;
}

void TierAdmission::Release(TicketId ticket) {
  Ready ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = admitted_.find(ticket);
    CHECK(it != admitted_.end()) << "Release of ticket " << static_cast<uint64_t>(ticket) << ", which holds no slot";
    const double hold_ms = static_cast<double>(std::max<int64_t>(0, options_.now_ms() - it->second.admitted_ms));
    mean_hold_ms_ += kHoldEwmaAlpha * (hold_ms - mean_hold_ms_);
    admitted_.erase(it);
    ready = FillSlotsLocked();
  }
  RunReady(std::move(ready));
}

void TierAdmission::SetNumSlots(int32_t num_slots) {
  CHECK_GE(num_slots, 0);
  Ready ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    num_slots_ = num_slots;
    ready = FillSlotsLocked();
  }
  RunReady(std::move(ready));
}

TierAdmission::Ready TierAdmission::FillSlotsLocked() {
  Ready ready;
  while (static_cast<int32_t>(admitted_.size()) < num_slots_) {
    const int i = PickTierLocked();
    if (i < 0) break;
    TierQueue& queue = queues_[i];
    Waiter waiter = std::move(queue.waiters.front());
    queue.waiters.pop_front();
    queued_.erase(waiter.ticket);
    virtual_time_ = queue.pass;
    queue.pass += queue.stride;
    GrantLocked(waiter.ticket, i);
    ready.emplace_back(std::move(waiter.on_admitted), waiter.ticket);
  }
  return ready;
}

int TierAdmission::PickTierLocked() const {
  int best = -1;
  for (int i = 0; i < kNumTiers; ++i) {
    if (queues_[i].waiters.empty()) continue;
    if (best < 0 || queues_[i].pass < queues_[best].pass) best = i;  // ties: the more urgent
  }
  return best;
}

void TierAdmission::GrantLocked(TicketId ticket, int tier) {
  admitted_[ticket] = Admitted{options_.now_ms()};
  ++queues_[tier].counts.num_admitted;
}

// The time the last waiter of `tier` can expect to wait: its queue over its share of the
// admission rate (slots / mean hold time, split by weight among the backlogged tiers).
int64_t TierAdmission::RetryAfterLocked(int tier) const {
  if (num_slots_ == 0) return kMaxRetryAfterS;
  double backlogged_weight = options_.weights[tier];
  for (int i = 0; i < kNumTiers; ++i) {
    if (i != tier && !queues_[i].waiters.empty()) backlogged_weight += options_.weights[i];
  }
  const double share = options_.weights[tier] / backlogged_weight;
  const double per_s = num_slots_ * 1000.0 / std::max(1.0, mean_hold_ms_) * share;
  const double wait_s = std::ceil((queues_[tier].waiters.size() + 1) / per_s);
  return std::clamp<int64_t>(static_cast<int64_t>(wait_s), 1, kMaxRetryAfterS);
}

void TierAdmission::RunReady(Ready ready) {
  for (auto& [callback, ticket] : ready) {
    if (callback) callback(ticket);
  }
}

int32_t TierAdmission::num_slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_slots_;
}

int32_t TierAdmission::num_in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(admitted_.size());
}

int32_t TierAdmission::QueueDepth(Tier tier) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(queues_[TierIndex(tier)].waiters.size());
}

TierAdmission::TierCounts TierAdmission::Counts(Tier tier) const {
  std::lock_guard<std::mutex> lock(mu_);
  return queues_[TierIndex(tier)].counts;
}

}  // namespace surge::router
