// PoolMetrics: one sample of a pool's load at a time, the only input of the scaling policy.
#pragma once

#include <optional>
#include <vector>

namespace surge::autoscale {

// One replica as the router sees it (from its /metrics and the router's own counts).
struct ReplicaSample {
  bool ready = false;               // passing /health; false while the model loads
  double num_waiting = 0;           // requests queued in the engine, not yet running
  std::optional<double> kv_usage;   // fraction of KV blocks in use, 0..1
  std::optional<double> busy_fraction;  // fraction of wall time the engine loop was stepping, 0..1
};

// A pool's load. Averages are over READY replicas: a loading replica carries no load yet.
// A metric that is unknown (no samples yet) is nullopt and its target is skipped.
struct PoolMetrics {
  int num_ready_replicas = 0;
  int num_pending_replicas = 0;  // started, still loading (capacity coming)
  std::optional<double> queue_depth_per_replica;  // mean waiting requests per ready replica
  std::optional<double> kv_usage;                 // mean KV usage, 0..1
  std::optional<double> busy_fraction;            // mean busy fraction, 0..1
  std::optional<double> ttft_p95_s;               // the pool's P95 time to first token, seconds
  bool needs_capacity = false;  // the router borrowed capacity from the next pool for this one

  // Counts and means from per-replica samples; ttft_p95_s and needs_capacity come from the
  // router's own histograms and tier state, so they are passed in.
  static PoolMetrics FromReplicas(const std::vector<ReplicaSample>& replicas, std::optional<double> ttft_p95_s,
                                  bool needs_capacity);
};

}  // namespace surge::autoscale
