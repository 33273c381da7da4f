#include "router/tiers/borrow_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/check.h"

namespace surge::router {

Status ValidateBorrowPolicyOptions(const BorrowPolicyOptions& options) {
  for (Tier tier : kAllTiers) {
    const int i = TierIndex(tier);
    if (options.pools[i].empty()) {
      return InvalidArgumentError(std::string("pools.") + TierName(tier) + " must name a pool");
    }
    if (!(options.threshold_ms[i] >= 0) || !std::isfinite(options.threshold_ms[i])) {
      return InvalidArgumentError(std::string("threshold_ms.") + TierName(tier) +
                                  " must be >= 0 (0: never borrows)");
    }
  }
  if (options.min_samples < 1) return InvalidArgumentError("min_samples must be >= 1");
  if (!(options.hysteresis > 0 && options.hysteresis <= 1)) {
    return InvalidArgumentError("hysteresis must be in (0, 1]");
  }
  if (options.hold_ms < 0) return InvalidArgumentError("hold_ms must be >= 0");
  if (options.eval_interval_ms < 0) return InvalidArgumentError("eval_interval_ms must be >= 0");
  return OkStatus();
}

BorrowPolicy::BorrowPolicy(BorrowPolicyOptions options, const TtftWindow* window)
    : options_(std::move(options)), window_(window) {
  CHECK(window_ != nullptr);
  const Status status = ValidateBorrowPolicyOptions(options_);
  CHECK(status.ok()) << status.ToString();
}

std::vector<std::string> BorrowPolicy::PoolsFor(Tier tier) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeEvaluateLocked();
  std::vector<std::string> pools = {options_.pools[TierIndex(tier)]};
  if (!tiers_[TierIndex(tier)].state.borrowing) return pools;
  for (int i = TierIndex(tier) + 1; i < kNumTiers; ++i) {
    if (std::find(pools.begin(), pools.end(), options_.pools[i]) == pools.end()) {
      pools.push_back(options_.pools[i]);
    }
  }
  return pools;
}

std::vector<std::string> BorrowPolicy::PoolNames() const {
  std::vector<std::string> names;
  for (const std::string& pool : options_.pools) {
    if (std::find(names.begin(), names.end(), pool) == names.end()) names.push_back(pool);
  }
  return names;
}

bool BorrowPolicy::NeedsCapacity(Tier tier) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeEvaluateLocked();
  return tiers_[TierIndex(tier)].state.borrowing;
}

bool BorrowPolicy::NeedsCapacity(std::string_view pool) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeEvaluateLocked();
  for (int i = 0; i < kNumTiers; ++i) {
    if (options_.pools[i] == pool && tiers_[i].state.borrowing) return true;
  }
  return false;
}

BorrowPolicy::TierState BorrowPolicy::State(Tier tier) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeEvaluateLocked();
  return tiers_[TierIndex(tier)].state;
}

void BorrowPolicy::Evaluate() {
  std::lock_guard<std::mutex> lock(mu_);
  EvaluateLocked(window_->now_ms());
}

void BorrowPolicy::MaybeEvaluateLocked() {
  const int64_t now_ms = window_->now_ms();
  if (last_eval_ms_ && now_ms - *last_eval_ms_ < options_.eval_interval_ms) return;
  EvaluateLocked(now_ms);
}

void BorrowPolicy::EvaluateLocked(int64_t now_ms) {
  last_eval_ms_ = now_ms;
  for (Tier tier : kAllTiers) EvaluateTierLocked(tier, now_ms);
}

// Borrow once the window holds enough samples and its P95 is over the threshold; give back
// once the P95 stayed under threshold * hysteresis for hold_ms (no samples: nothing is slow).
// Between the two lines the state is kept, so a P95 hovering near the threshold cannot flap.
void BorrowPolicy::EvaluateTierLocked(Tier tier, int64_t now_ms) {
  TierRecord& record = tiers_[TierIndex(tier)];
  TierState& state = record.state;
  state.p95_ms = window_->P95(tier);
  state.num_samples = window_->NumSamples(tier);
  const double threshold_ms = options_.threshold_ms[TierIndex(tier)];
  if (threshold_ms <= 0) return;
  if (!state.borrowing) {
    if (state.num_samples >= options_.min_samples && state.p95_ms && *state.p95_ms > threshold_ms) {
      state.borrowing = true;
      ++state.num_borrows;
      record.recovered_since_ms.reset();
    }
    return;
  }
  const bool recovered = !state.p95_ms || *state.p95_ms < threshold_ms * options_.hysteresis;
  if (!recovered) {
    record.recovered_since_ms.reset();
    return;
  }
  if (!record.recovered_since_ms) record.recovered_since_ms = now_ms;
  if (now_ms - *record.recovered_since_ms >= options_.hold_ms) {
    state.borrowing = false;
    ++state.num_give_backs;
    record.recovered_since_ms.reset();
  }
}

}  // namespace surge::router
