// BorrowPolicy: which pools a tier may use -- its own, plus the lower tiers' pools while its
// windowed P95 TTFT misses its threshold -- and the "needs capacity" signal for autoscaling.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "router/tiers/tier.h"
#include "router/tiers/ttft_window.h"

namespace surge::router {

struct BorrowPolicyOptions {
  // Each tier's own pool (indexed by TierIndex): P1 dedicated, P2 shared, P3 elastic. Tiers
  // may share a pool (two pools: realtime -> "fast", normal and batch -> "bulk").
  std::array<std::string, kNumTiers> pools = {"P1", "P2", "P3"};
  // P95 TTFT above which the tier borrows; 0 = never borrows (batch: nothing lies below it).
  std::array<double, kNumTiers> threshold_ms = {2000, 5000, 0};
  int32_t min_samples = 20;   // fewer samples in the window are no evidence of overload
  double hysteresis = 0.8;    // give back only below threshold * hysteresis, in (0, 1]
  int64_t hold_ms = 10000;    // ... and only after staying there this long
  // P95 is recomputed at most this often (a sort of the window); PoolsFor is on the hot path.
  int64_t eval_interval_ms = 100;
};

// InvalidArgument naming the field ("pools.batch", "threshold_ms.normal", "hysteresis", ...).
Status ValidateBorrowPolicyOptions(const BorrowPolicyOptions& options);

// Thread-safe. Reads TTFT from `window` (borrowed: it must outlive the policy), with the
// window's clock. State changes only when evaluated: lazily by the accessors (every
// eval_interval_ms at most) or by Evaluate().
class BorrowPolicy {
 public:
  BorrowPolicy(BorrowPolicyOptions options, const TtftWindow* window);  // CHECKs the options

  // The pools the tier may use, in order of preference: its own first, then while borrowing
  // the pools of each less urgent tier (realtime: P1, P2, P3; normal: P2, P3). No duplicates.
  std::vector<std::string> PoolsFor(Tier tier);
  // The tier is borrowing: its own pool is short of capacity.
  bool NeedsCapacity(Tier tier);
  // Some tier whose own pool this is is borrowing (what an autoscaler reads per pool).
  bool NeedsCapacity(std::string_view pool);

  // Every pool named, once each, in tier order.
  std::vector<std::string> PoolNames() const;

  struct TierState {
    bool borrowing = false;
    std::optional<double> p95_ms;  // at the last evaluation; nullopt when there were no samples
    int32_t num_samples = 0;       // at the last evaluation
    uint64_t num_borrows = 0;      // transitions into borrowing
    uint64_t num_give_backs = 0;   // transitions back
  };
  TierState State(Tier tier);
  // Re-reads the window and applies the borrowing rule now (tests; a metrics scrape).
  void Evaluate();

 private:
  struct TierRecord {
    TierState state;
    std::optional<int64_t> recovered_since_ms;  // below threshold * hysteresis since then
  };
  void MaybeEvaluateLocked();
  void EvaluateLocked(int64_t now_ms);
  void EvaluateTierLocked(Tier tier, int64_t now_ms);

  const BorrowPolicyOptions options_;
  const TtftWindow* window_;
  std::mutex mu_;
  std::array<TierRecord, kNumTiers> tiers_;
  std::optional<int64_t> last_eval_ms_;
};

}  // namespace surge::router
