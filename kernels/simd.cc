#include "kernels/simd.h"

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "base/check.h"
#include "base/logging.h"

namespace surge {
namespace {

SimdLevel CpuSimdLevel() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    if (!__builtin_cpu_supports("avx512vnni")) return SimdLevel::kAvx512;
    if (!__builtin_cpu_supports("avx512bf16")) return SimdLevel::kAvx512Vnni;
    return SimdLevel::kAvx512Bf16;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdLevel::kAvx2;
#endif
  return SimdLevel::kScalar;
}

SimdLevel ComputeDetectedLevel() {
  SimdLevel level = CpuSimdLevel();
  const char* env = std::getenv("SURGE_SIMD");
  if (env == nullptr || *env == '\0') return level;
  const std::string_view want(env);
  for (int i = 0; i <= static_cast<int>(SimdLevel::kAvx512Bf16); ++i) {
    const SimdLevel cap = static_cast<SimdLevel>(i);
    if (want == SimdLevelName(cap)) return cap < level ? cap : level;
  }
  LOG(WARNING) << "SURGE_SIMD=" << want
               << " is not scalar|avx2|avx512|avx512_vnni|avx512_bf16; ignored";
  return level;
}

// -1 until first use; then the active level as an int.
std::atomic<int> g_active_level{-1};

}  // namespace

const char* SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar:
      return "scalar";
    case SimdLevel::kAvx2:
      return "avx2";
    case SimdLevel::kAvx512:
      return "avx512";
    case SimdLevel::kAvx512Vnni:
      return "avx512_vnni";
    case SimdLevel::kAvx512Bf16:
      return "avx512_bf16";
  }
  return "?";
}

SimdLevel DetectedSimdLevel() {
  static const SimdLevel level = ComputeDetectedLevel();
  return level;
}

SimdLevel ActiveSimdLevel() {
  int level = g_active_level.load(std::memory_order_relaxed);
  if (level < 0) {
    level = static_cast<int>(DetectedSimdLevel());
    g_active_level.store(level, std::memory_order_relaxed);
  }
  return static_cast<SimdLevel>(level);
}

std::vector<SimdLevel> SupportedSimdLevels() {
  std::vector<SimdLevel> levels;
  for (int i = 0; i <= static_cast<int>(DetectedSimdLevel()); ++i) {
    levels.push_back(static_cast<SimdLevel>(i));
  }
  return levels;
}

ScopedSimdLevel::ScopedSimdLevel(SimdLevel level) : previous_(ActiveSimdLevel()) {
  CHECK(level <= DetectedSimdLevel()) << "this CPU does not support " << SimdLevelName(level);
  g_active_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

ScopedSimdLevel::~ScopedSimdLevel() {
  g_active_level.store(static_cast<int>(previous_), std::memory_order_relaxed);
}

}  // namespace surge
