// Rng: a small seeded generator (splitmix64) whose streams are identical on every platform
// and standard library, so `--seed` reproduces a workload byte for byte.
#pragma once

#include <cmath>
#include <cstdint>

namespace surge::bench {

// Mixes values into one 64-bit seed (splitmix64 finalizer): Mix(seed, round, index) gives
// each request its own independent stream.
constexpr uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c) { return MixSeed(MixSeed(a, b), c); }

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi] (inclusive); lo when hi < lo.
  int64_t UniformInt(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(Next() % span);
  }
  // Exponential with the given rate (mean 1 / rate): Poisson-process inter-arrival gaps.
  double Exponential(double rate) { return -std::log1p(-Uniform()) / rate; }

 private:
  uint64_t state_;
};

}  // namespace surge::bench
