#include "base/phase_profile.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace surge {
namespace {

constexpr std::array<std::string_view, kNumPhases> kPhaseNames = {
    "embed",      "norm",        "qkv",         "rope_kv_store", "mla_query",   "mla_absorb",
    "attention",  "o_proj",      "residual",    "gate_up",       "activation",  "down",
    "moe_route",  "moe_experts", "logits",      "forward",       "scheduling",  "batch_build",
    "sampling",   "publish",     "http_io",     "http_request",  "http_stream",
};

struct Counters {
  std::array<std::atomic<int64_t>, kNumPhases> ns{};
  std::array<std::atomic<int64_t>, kNumPhases> calls{};
};

Counters& Totals() {
  static Counters counters;
  return counters;
}

bool EnabledFromEnvironment() {
  const char* value = std::getenv("SURGE_PHASE_PROFILE");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

}  // namespace

namespace internal {
std::atomic<bool> phase_profile_enabled{EnabledFromEnvironment()};
}  // namespace internal

std::string_view PhaseName(Phase phase) { return kPhaseNames[static_cast<size_t>(phase)]; }

void EnablePhaseProfile(bool enabled) {
  internal::phase_profile_enabled.store(enabled, std::memory_order_relaxed);
}

void AddPhaseTime(Phase phase, int64_t ns) {
  Counters& totals = Totals();
  totals.ns[static_cast<size_t>(phase)].fetch_add(ns, std::memory_order_relaxed);
  totals.calls[static_cast<size_t>(phase)].fetch_add(1, std::memory_order_relaxed);
}

PhaseTotals PhaseProfileSnapshot() {
  PhaseTotals snapshot;
  Counters& totals = Totals();
  for (int32_t i = 0; i < kNumPhases; ++i) {
    snapshot.ns[i] = totals.ns[i].load(std::memory_order_relaxed);
    snapshot.calls[i] = totals.calls[i].load(std::memory_order_relaxed);
  }
  return snapshot;
}

void ResetPhaseProfile() {
  Counters& totals = Totals();
  for (int32_t i = 0; i < kNumPhases; ++i) {
    totals.ns[i].store(0, std::memory_order_relaxed);
    totals.calls[i].store(0, std::memory_order_relaxed);
  }
}

PhaseTotals PhaseTotalsSince(const PhaseTotals& a, const PhaseTotals& b) {
  PhaseTotals difference;
  for (int32_t i = 0; i < kNumPhases; ++i) {
    difference.ns[i] = b.ns[i] - a.ns[i];
    difference.calls[i] = b.calls[i] - a.calls[i];
  }
  return difference;
}

std::string PhaseProfilePrometheus() {
  if (!PhaseProfileEnabled()) return "";
  const PhaseTotals totals = PhaseProfileSnapshot();
  std::ostringstream out;
  out.precision(9);
  out << "# HELP surge_phase_seconds_total Time spent per phase of decode steps and HTTP "
         "work (SURGE_PHASE_PROFILE=1).\n# TYPE surge_phase_seconds_total counter\n";
  for (int32_t i = 0; i < kNumPhases; ++i) {
    out << "surge_phase_seconds_total{phase=\"" << kPhaseNames[i] << "\"} " << totals.ns[i] * 1e-9 << "\n";
  }
  out << "# HELP surge_phase_calls_total Timed spans per phase.\n# TYPE surge_phase_calls_total counter\n";
  for (int32_t i = 0; i < kNumPhases; ++i) {
    out << "surge_phase_calls_total{phase=\"" << kPhaseNames[i] << "\"} " << totals.calls[i] << "\n";
  }
  return out.str();
}

}  // namespace surge
