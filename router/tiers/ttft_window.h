// TtftWindow: per-tier time-to-first-token samples over a sliding time window (bounded
// memory), and their P95 -- what BorrowPolicy and the per-tier TTFT metrics read.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "base/status.h"
#include "router/tiers/tier.h"

namespace surge::router {

struct TtftWindowOptions {
  int64_t window_ms = 30000;    // samples older than this no longer count
  int32_t max_samples = 4096;   // per tier; past it the oldest go first (bounds memory)
  std::function<int64_t()> now_ms;  // monotonic milliseconds; injected for virtual time
};

// InvalidArgument naming the field ("window_ms", "max_samples", "now_ms").
Status ValidateTtftWindowOptions(const TtftWindowOptions& options);

// Thread-safe. Add is a lock and a push; Percentile copies and sorts the tier's samples, so
// readers that poll it (BorrowPolicy) do so at a bounded rate.
class TtftWindow {
 public:
  explicit TtftWindow(TtftWindowOptions options);  // CHECKs ValidateTtftWindowOptions

  void Add(Tier tier, double ttft_ms);
  // The q-quantile (q in [0, 1]) of the tier's samples in the window; nullopt when none.
  std::optional<double> Percentile(Tier tier, double q) const;
  std::optional<double> P95(Tier tier) const { return Percentile(tier, 0.95); }
  int32_t NumSamples(Tier tier) const;  // within the window, now
  int64_t now_ms() const { return options_.now_ms(); }

 private:
  struct Sample {
    int64_t at_ms;
    double ttft_ms;
  };
  // Drops what the window no longer covers; returns the tier's samples.
  std::deque<Sample>& TrimLocked(Tier tier) const;

  const TtftWindowOptions options_;
  mutable std::mutex mu_;
  mutable std::array<std::deque<Sample>, kNumTiers> samples_;  // oldest first
};

}  // namespace surge::router
