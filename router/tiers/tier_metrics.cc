#include "router/tiers/tier_metrics.h"

#include <cmath>
#include <limits>
#include <mutex>

namespace surge::router {
namespace {

// TTFT buckets: 10 ms to ~82 s, doubling.
std::vector<double> TtftBuckets() { return obs::ExponentialBuckets(0.01, 2, 14); }

// Serialises AdvanceTo's read-modify-write when two scrapes overlap.
std::mutex& AdvanceMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

TierMetrics::TierMetrics(obs::Registry* registry)
    : queue_depth_(registry->AddGaugeFamily("surge_router_tier_queue_depth",
                                            "Requests waiting in the router's own queue, by pool and tier.",
                                            {"pool", "tier"})),
      admitted_(registry->AddCounterFamily("surge_router_tier_admitted_total",
                                           "Requests given a slot of the pool, by pool and tier.", {"pool", "tier"})),
      rejected_(registry->AddCounterFamily("surge_router_tier_rejected_total",
                                           "Requests refused with 429 because the tier's queue was full.",
                                           {"pool", "tier"})),
      cancelled_(registry->AddCounterFamily("surge_router_tier_cancelled_total",
                                            "Queued requests whose client went away before a slot.", {"pool", "tier"})),
      slots_(registry->AddGaugeFamily("surge_router_pool_slots", "Concurrent requests the pool admits.", {"pool"})),
      slots_in_use_(registry->AddGaugeFamily("surge_router_pool_slots_in_use", "Slots held by running requests.",
                                             {"pool"})),
      ttft_(registry->AddHistogramFamily("surge_router_tier_ttft_seconds",
                                         "Time to first token seen by the router, by tier.", {"tier"}, TtftBuckets())),
      ttft_p95_(registry->AddGaugeFamily("surge_router_tier_ttft_p95_seconds",
                                         "P95 TTFT over the borrowing window (NaN when empty).", {"tier"})),
      borrowing_(registry->AddGaugeFamily("surge_router_tier_borrowing",
                                          "1 while the tier may use the lower tiers' pools.", {"tier"})),
      borrows_(registry->AddCounterFamily("surge_router_tier_borrows_total",
                                          "Times the tier started borrowing lower pools.", {"tier"})),
      give_backs_(registry->AddCounterFamily("surge_router_tier_give_backs_total",
                                             "Times the tier gave borrowed capacity back.", {"tier"})),
      needs_capacity_(registry->AddGaugeFamily("surge_router_pool_needs_capacity",
                                               "1 while a tier whose own pool this is misses its TTFT target.",
                                               {"pool"})) {
  for (Tier tier : kAllTiers) ttft_by_tier_[TierIndex(tier)] = &ttft_.WithLabels({TierName(tier)});
}

void TierMetrics::ObserveTtft(Tier tier, double ttft_ms) {
  ttft_by_tier_[TierIndex(tier)]->Observe(ttft_ms / 1000.0);
}

void TierMetrics::AdvanceTo(obs::Counter& counter, double total) {
  std::lock_guard<std::mutex> lock(AdvanceMutex());
  if (total > counter.value()) counter.Increment(total - counter.value());
}

void TierMetrics::Refresh(std::string_view pool, const TierAdmission& admission) {
  for (Tier tier : kAllTiers) {
    const TierAdmission::TierCounts counts = admission.Counts(tier);
    queue_depth_.WithLabels({pool, TierName(tier)}).Set(admission.QueueDepth(tier));
    AdvanceTo(admitted_.WithLabels({pool, TierName(tier)}), static_cast<double>(counts.num_admitted));
    AdvanceTo(rejected_.WithLabels({pool, TierName(tier)}), static_cast<double>(counts.num_rejected));
    AdvanceTo(cancelled_.WithLabels({pool, TierName(tier)}), static_cast<double>(counts.num_cancelled));
  }
  slots_.WithLabels({pool}).Set(admission.num_slots());
  slots_in_use_.WithLabels({pool}).Set(admission.num_in_use());
}

void TierMetrics::Refresh(const TtftWindow& window, BorrowPolicy& policy) {
  policy.Evaluate();
  for (Tier tier : kAllTiers) {
    const std::optional<double> p95_ms = window.P95(tier);
    ttft_p95_.WithLabels({TierName(tier)})
        .Set(p95_ms ? *p95_ms / 1000.0 : std::numeric_limits<double>::quiet_NaN());
    const BorrowPolicy::TierState state = policy.State(tier);
    borrowing_.WithLabels({TierName(tier)}).Set(state.borrowing ? 1 : 0);
    AdvanceTo(borrows_.WithLabels({TierName(tier)}), static_cast<double>(state.num_borrows));
    AdvanceTo(give_backs_.WithLabels({TierName(tier)}), static_cast<double>(state.num_give_backs));
  }
  for (const std::string& pool : policy.PoolNames()) {
    needs_capacity_.WithLabels({pool}).Set(policy.NeedsCapacity(std::string_view(pool)) ? 1 : 0);
  }
}

}  // namespace surge::router
