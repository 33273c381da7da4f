#include "router/tiers/ttft_window.h"

#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "obs/percentile.h"

namespace surge::router {

Status ValidateTtftWindowOptions(const TtftWindowOptions& options) {
  if (options.window_ms < 1) {
    return InvalidArgumentError("window_ms must be >= 1, got " + std::to_string(options.window_ms));
  }
  if (options.max_samples < 1) {
    return InvalidArgumentError("max_samples must be >= 1, got " + std::to_string(options.max_samples));
  }
  if (!options.now_ms) return InvalidArgumentError("now_ms: a clock is required");
  return OkStatus();
}

TtftWindow::TtftWindow(TtftWindowOptions options) : options_(std::move(options)) {
  const Status status = ValidateTtftWindowOptions(options_);
  CHECK(status.ok()) << status.ToString();
}

void TtftWindow::Add(Tier tier, double ttft_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<Sample>& samples = TrimLocked(tier);
  if (static_cast<int32_t>(samples.size()) >= options_.max_samples) samples.pop_front();
  samples.push_back(Sample{options_.now_ms(), ttft_ms});
}

std::optional<double> TtftWindow::Percentile(Tier tier, double q) const {
  std::vector<double> values;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::deque<Sample>& samples = TrimLocked(tier);
    if (samples.empty()) return std::nullopt;
    values.reserve(samples.size());
    for (const Sample& sample : samples) values.push_back(sample.ttft_ms);
  }
  return obs::Percentile(values, q);
}

int32_t TtftWindow::NumSamples(Tier tier) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(TrimLocked(tier).size());
}

std::deque<TtftWindow::Sample>& TtftWindow::TrimLocked(Tier tier) const {
  std::deque<Sample>& samples = samples_[TierIndex(tier)];
  const int64_t oldest_ms = options_.now_ms() - options_.window_ms;
  while (!samples.empty() && samples.front().at_ms <= oldest_ms) samples.pop_front();
  return samples;
}

}  // namespace surge::router
