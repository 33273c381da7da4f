// TierMetrics: the router's per-tier and per-pool series for /metrics -- queue depth,
// admissions, rejections, cancels, slots, TTFT (histogram and windowed P95), borrowing and
// the needs-capacity signal -- read from the tier objects at scrape time.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

#include "obs/metrics.h"
#include "router/tiers/borrow_policy.h"
#include "router/tiers/tier_admission.h"
#include "router/tiers/ttft_window.h"

namespace surge::router {

// Names: surge_router_tier_queue_depth{pool,tier}, surge_router_tier_admitted_total{pool,tier},
// surge_router_tier_rejected_total{pool,tier}, surge_router_tier_cancelled_total{pool,tier},
// surge_router_pool_slots{pool}, surge_router_pool_slots_in_use{pool},
// surge_router_tier_ttft_seconds{tier} (histogram), surge_router_tier_ttft_p95_seconds{tier}
// (the window's; NaN when empty), surge_router_tier_borrowing{tier},
// surge_router_tier_borrows_total{tier}, surge_router_tier_give_backs_total{tier},
// surge_router_pool_needs_capacity{pool}.
class TierMetrics {
 public:
  // Registers the families in `registry`, which must outlive this object.
  explicit TierMetrics(obs::Registry* registry);

  // On the request path, when a response's first token arrived (the gateway also adds it
  // to the TtftWindow).
  void ObserveTtft(Tier tier, double ttft_ms);
  // At scrape time, before Registry::Expose: one call per pool's admission queue ...
  void Refresh(std::string_view pool, const TierAdmission& admission);
  // ... and one for the borrowing state (also evaluates the policy: a scrape sees fresh state).
  void Refresh(const TtftWindow& window, BorrowPolicy& policy);

 private:
  // Counters only go up: the families take the growth since the last refresh.
  static void AdvanceTo(obs::Counter& counter, double total);

  obs::GaugeFamily& queue_depth_;
  obs::CounterFamily& admitted_;
  obs::CounterFamily& rejected_;
  obs::CounterFamily& cancelled_;
  obs::GaugeFamily& slots_;
  obs::GaugeFamily& slots_in_use_;
  obs::HistogramFamily& ttft_;
  obs::GaugeFamily& ttft_p95_;
  obs::GaugeFamily& borrowing_;
  obs::CounterFamily& borrows_;
  obs::CounterFamily& give_backs_;
  obs::GaugeFamily& needs_capacity_;
  std::array<obs::Histogram*, kNumTiers> ttft_by_tier_;  // looked up once: Observe is lock-free
};

}  // namespace surge::router
