// TiersConfig: the "tiers" section of the route config (JSON) -- weights, queue bounds,
// pools, TTFT thresholds and the borrowing rule's window, hysteresis and hold -- with every
// unknown key refused by its path.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "router/tiers/borrow_policy.h"
#include "router/tiers/tier_admission.h"
#include "router/tiers/ttft_window.h"

namespace surge::router {

// Clocks (now_ms) and TierAdmissionOptions::num_slots (the pool's capacity) are left to the
// gateway; everything else has the defaults of the option structs.
struct TiersConfig {
  TierAdmissionOptions admission;
  TtftWindowOptions window;
  BorrowPolicyOptions borrow;
};

// Reads `object` (at `path`, e.g. "tiers") into `config`, which holds the defaults:
//   {"weights":      {"realtime": 10, "normal": 5, "batch": 1},
//    "max_queued":   {"realtime": 256, "normal": 256, "batch": 1024},
//    "pools":        {"realtime": "P1", "normal": "P2", "batch": "P3"},
//    "threshold_ms": {"realtime": 2000, "normal": 5000, "batch": 0},
//    "window_ms": 30000, "max_samples": 4096, "min_samples": 20, "hysteresis": 0.8,
//    "hold_ms": 10000, "eval_interval_ms": 100, "initial_hold_ms": 1000}
// Any subset may be given (a per-tier object may name some tiers). InvalidArgument:
// "unknown config key 'tiers.weights.gold'", "tiers.hysteresis must be in (0, 1]". The
// signature fits RouteConfig's nested-section parsers.
Status ParseTiersConfig(const nlohmann::json& object, const std::string& path, TiersConfig* config);

}  // namespace surge::router
