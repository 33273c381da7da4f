#include "autoscale/pool_metrics.h"

namespace surge::autoscale {
namespace {

// Mean of the present values; nullopt when none is.
struct Mean {
  double sum = 0;
  int num = 0;
  void Add(std::optional<double> value) {
    if (value) {
      sum += *value;
      ++num;
    }
  }
  std::optional<double> Get() const { return num > 0 ? std::optional<double>(sum / num) : std::nullopt; }
};

}  // namespace

PoolMetrics PoolMetrics::FromReplicas(const std::vector<ReplicaSample>& replicas, std::optional<double> ttft_p95_s,
                                      bool needs_capacity) {
  PoolMetrics m;
  Mean waiting, kv, busy;
  for (const ReplicaSample& r : replicas) {
    if (!r.ready) {
      ++m.num_pending_replicas;
      continue;
    }
    ++m.num_ready_replicas;
    waiting.Add(r.num_waiting);
    kv.Add(r.kv_usage);
    busy.Add(r.busy_fraction);
  }
  m.queue_depth_per_replica = waiting.Get();
  m.kv_usage = kv.Get();
  m.busy_fraction = busy.Get();
  m.ttft_p95_s = ttft_p95_s;
  m.needs_capacity = needs_capacity;
  return m;
}

}  // namespace surge::autoscale
