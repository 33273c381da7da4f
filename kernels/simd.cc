#include "kernels/simd.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "base/check.h"
#include "base/logging.h"

namespace surge {
namespace {

#if defined(__x86_64__)
// CPUID.(7,0):EDX bits 22 (AMX-BF16), 24 (AMX-TILE), 25 (AMX-INT8), and XCR0 bits 17
// (XTILECFG) and 18 (XTILEDATA): the CPU has the units and the OS saves their state.
bool CpuHasAmx() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  constexpr unsigned kAmxBits = (1u << 22) | (1u << 24) | (1u << 25);
  if ((d & kAmxBits) != kAmxBits) return false;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
  unsigned xcr0_low, xcr0_high;
  asm volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  constexpr unsigned kTileState = (1u << 17) | (1u << 18);
  return (xcr0_low & kTileState) == kTileState;
}

// Linux (5.16+) traps the first tile instruction of a process that has not asked for
// the 8 KiB tile data state; asking is process-wide and idempotent.
bool RequestTilePermission() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long permitted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) != 0) return false;
  return (permitted >> kXfeatureXtiledata) & 1;
#else
  return false;
#endif
}
#endif

SimdLevel CpuSimdLevel() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    if (!__builtin_cpu_supports("avx512vnni")) return SimdLevel::kAvx512;
    if (!__builtin_cpu_supports("avx512bf16")) return SimdLevel::kAvx512Vnni;
#if defined(__x86_64__)
    if (CpuHasAmx() && RequestTilePermission()) return SimdLevel::kAmx;
#endif
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
  for (int i = 0; i <= static_cast<int>(SimdLevel::kAmx); ++i) {
    const SimdLevel cap = static_cast<SimdLevel>(i);
    if (want == SimdLevelName(cap)) return cap < level ? cap : level;
  }
  LOG(WARNING) << "SURGE_SIMD=" << want
               << " is not scalar|avx2|avx512|avx512_vnni|avx512_bf16|amx; ignored";
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
    case SimdLevel::kAmx:
      return "amx";
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
