// libFuzzer target: Prometheus text from outside the process, through both readers of it:
// router/engine_metrics.cc's ParseEngineLoad (an engine's /metrics, which reaches the
// load-balancing policies) and obs/exposition.cc's ParseExposition (each compiled
// into this target alone). An accepted engine load is usable: every field is -1 (not
// reported) or finite, counts >= 0, fractions in [0, 1].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "obs/exposition.h"
#include "router/engine_metrics.h"

namespace {

void CheckUsable(double value, double max) {
  CHECK(value == -1 || (std::isfinite(value) && value >= 0 && value <= max)) << value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto load = surge::router::ParseEngineLoad(text);
  if (load.ok()) {
    CheckUsable(load->num_running, 1e18);  // a sum of counts, each at most 1e9
    CheckUsable(load->num_waiting, 1e18);
    CheckUsable(load->kv_usage, 1);
    CheckUsable(load->busy_fraction, 1);
  }
  auto exposition = surge::obs::ParseExposition(text);
  if (exposition.ok()) {
    for (const surge::obs::Sample& sample : exposition->samples) CHECK(!sample.name.empty());
  }
  return 0;
}
