// SimdLevel: which instruction-set path the kernels take, picked once from CPUID.
#pragma once

#include <vector>

namespace surge {

// Ordered: a CPU that runs a level runs every lower one. The AVX-512 extensions are
// levels of their own because every CPU with AVX512_BF16 (Cooper Lake, Sapphire Rapids,
// Zen 4) also has AVX512_VNNI, and every one with VNNI has the base set -- so one
// number still orders them, and tests can take each path on one machine.
enum class SimdLevel {
  kScalar = 0,
  kAvx2 = 1,        // avx2 + fma
  kAvx512 = 2,      // avx512 f/bw/vl/dq: f32 and bf16 (widened) kernels
  kAvx512Vnni = 3,  // + avx512_vnni: int8/int4 dot products with vpdpbusd
  kAvx512Bf16 = 4,  // + avx512_bf16: vdpbf16ps
  // + AMX-TILE, AMX-INT8 and AMX-BF16, with XCR0's tile state enabled and the Linux
  // permission to use it (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), asked
  // once per process by DetectedSimdLevel()). Every AMX CPU (Sapphire Rapids on) has
  // AVX512_BF16 too, so the order holds. Tile configs are per thread: the AMX kernels
  // load theirs on whichever pool thread runs them (kernels/amx_tiles-inl.h).
  kAmx = 5,
};

const char* SimdLevelName(SimdLevel level);

// The best level this CPU (and OS) supports: AVX-512 needs avx512f/bw/vl/dq, AVX2 needs
// avx2 + fma, AMX the above. SURGE_SIMD=scalar|avx2|avx512|avx512_vnni|avx512_bf16|amx
// caps it (for debugging and A/B runs); each name caps at exactly that level, so
// SURGE_SIMD=avx512 runs the AVX-512 f32 kernels with the AVX2 integer ones, and
// SURGE_SIMD=avx512_bf16 turns AMX off.
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
