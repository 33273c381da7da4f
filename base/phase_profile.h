// Where a step's time goes: steady-clock marks between the phases of a forward pass and an
// engine step (each GEMM, attention, norms, sampling, scheduling) and the HTTP work around
// them, summed per phase over the process. Compiled in, off unless enabled
// (SURGE_PHASE_PROFILE=1 in the environment, or EnablePhaseProfile); off, a mark costs one
// relaxed atomic load. perf gets no samples on the guests this project runs on, hence this.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace surge {

enum class Phase : int32_t {
  // Inside the forward pass (model/), attributed on the thread that runs the pass.
  kEmbed,          // embedding rows, RoPE cos/sin, batch checks
  kNorm,           // RMSNorms of the residual stream
  kQkv,            // the qkv GEMM (MLA: q_a/kv_a)
  kRopeKvStore,    // RoPE of q and k, quantizing K/V (MLA: the latent) into the cache
  kMlaQuery,       // MLA: q_b GEMM and the query's RoPE
  kMlaAbsorb,      // MLA: W_UK into the query, W_UV out of the latent (per-head GEMMs)
  kAttention,      // paged attention over the KV cache
  kOProj,          // the o_proj GEMM
  kResidual,       // residual adds
  kGateUp,         // the gate/up GEMM (dense or shared experts)
  kActivation,     // SiLU * up
  kDown,           // the down GEMM (dense or shared experts)
  kMoeRoute,       // MoE router GEMM, top-k, grouping rows by expert, weighted sum
  kMoeExperts,     // the routed experts' GEMMs and activations
  kLogits,         // final norm and lm_head
  kForward,        // the whole pass: includes every phase above
  // Around it, on the engine thread (engine/).
  kScheduling,     // scheduler plan, proposals, scheduler update
  kBatchBuild,     // the runner's flat batch from the plan
  kSampling,       // logits processing, sampling, stop checks
  kPublish,        // handing tokens to the requests' channels
  // The HTTP side (net/, server/), on its own threads, beside the steps.
  kHttpIo,         // reading, parsing and writing sockets (io thread)
  kHttpRequest,    // a generation request's handler: JSON, template, tokenize, submit
  kHttpStream,     // turning engine output into response bytes
  kNumPhases,
};

inline constexpr int32_t kNumPhases = static_cast<int32_t>(Phase::kNumPhases);

std::string_view PhaseName(Phase phase);

namespace internal {
extern std::atomic<bool> phase_profile_enabled;
}  // namespace internal

inline bool PhaseProfileEnabled() {
  return internal::phase_profile_enabled.load(std::memory_order_relaxed);
}
void EnablePhaseProfile(bool enabled);

// Adds `ns` nanoseconds (one call) to `phase`. Thread-safe.
void AddPhaseTime(Phase phase, int64_t ns);

struct PhaseTotals {
  std::array<int64_t, kNumPhases> ns{};
  std::array<int64_t, kNumPhases> calls{};
};
PhaseTotals PhaseProfileSnapshot();
void ResetPhaseProfile();
// PhaseTotals b minus a, phase by phase.
PhaseTotals PhaseTotalsSince(const PhaseTotals& a, const PhaseTotals& b);
// Prometheus text of the totals (surge_phase_seconds_total, surge_phase_calls_total);
// empty while profiling is off.
std::string PhaseProfilePrometheus();

// Sequential marks: each Mark(phase) charges the time since the previous mark (or since
// construction) to `phase`. Nothing happens while profiling is off.
class PhaseMarks {
 public:
  PhaseMarks() : enabled_(PhaseProfileEnabled()) {
    if (enabled_) last_ = std::chrono::steady_clock::now();
  }
  void Mark(Phase phase) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    AddPhaseTime(phase, std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count());
    last_ = now;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_;
};

// Charges its lifetime to one phase.
class PhaseSpan {
 public:
  explicit PhaseSpan(Phase phase) : phase_(phase) {}
  ~PhaseSpan() { marks_.Mark(phase_); }
  PhaseSpan(const PhaseSpan&) = delete;
  PhaseSpan& operator=(const PhaseSpan&) = delete;

 private:
  Phase phase_;
  PhaseMarks marks_;
};

}  // namespace surge
