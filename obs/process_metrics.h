// ProcessMetrics: the Prometheus client libraries' standard process series (read from
// /proc/self at scrape time): process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_start_time_seconds — the same
// names every exporter uses, so existing dashboards and alerts read surge's processes.
#pragma once

#include <mutex>

#include "obs/metrics.h"

namespace surge::obs {

class ProcessMetrics {
 public:
  explicit ProcessMetrics(Registry* registry);  // the registry must outlive this
  void Refresh();  // before Registry::Expose; thread-safe

 private:
  Counter& cpu_seconds_;
  Gauge& resident_bytes_;
  Gauge& virtual_bytes_;
  Gauge& open_fds_;
  Gauge& start_time_seconds_;
  std::mutex mu_;
  double last_cpu_seconds_ = 0;  // guarded by mu_: the counter takes the growth
};

}  // namespace surge::obs
