// SimdLevel: which instruction-set path the kernels take, picked once from CPUID.
#pragma once

#include <vector>

namespace surge {

// Ordered: a CPU that runs a level runs every lower one.
enum class SimdLevel { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* SimdLevelName(SimdLevel level);

// The best level this CPU (and OS) supports: AVX-512 needs avx512f/bw/vl/dq, AVX2 needs
// avx2 + fma. SURGE_SIMD=scalar|avx2|avx512 caps it (for debugging and A/B runs).
SimdLevel DetectedSimdLevel();

// The level every dispatched kernel uses now: DetectedSimdLevel() unless a
// ScopedSimdLevel overrides it. One level for the whole process keeps results
// reproducible (the paths round differently, so mixing them would break batch invariance).
SimdLevel ActiveSimdLevel();

// Every level the binary can take on this CPU, lowest first; tests run each.
std::vector<SimdLevel> SupportedSimdLevels();

// Forces a level for the lifetime of the object (tests only; not thread-safe with
// kernels running concurrently). CHECKs that the CPU supports it.
class ScopedSimdLevel {
 public:
  explicit ScopedSimdLevel(SimdLevel level);
  ~ScopedSimdLevel();
  ScopedSimdLevel(const ScopedSimdLevel&) = delete;
  ScopedSimdLevel& operator=(const ScopedSimdLevel&) = delete;

 private:
  SimdLevel previous_;
};

}  // namespace surge
