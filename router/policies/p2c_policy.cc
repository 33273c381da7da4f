// p2c (power of two choices): two distinct random candidates, the one with fewer requests
// on it wins -- nearly least-load's balance with no global scan and no herding.
#include <chrono>
#include <mutex>
#include <random>

#include "router/policy.h"

namespace surge::router {
namespace {

class P2cPolicy final : public Policy {
 public:
  explicit P2cPolicy(uint64_t seed)
      : rng_(seed != 0 ? seed : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())) {}

  std::string_view name() const override { return "p2c"; }

  PickResult Pick(const RouteRequest&, std::span<const Candidate> candidates) override {
    if (candidates.size() == 1) return 0;
    size_t a, b;
    {
      std::lock_guard<std::mutex> lock(mu_);
      a = std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng_);
      b = std::uniform_int_distribution<size_t>(0, candidates.size() - 2)(rng_);
    }
    if (b >= a) ++b;  // distinct from a, uniform over the rest
    return RequestLoad(candidates[b]) < RequestLoad(candidates[a]) ? b : a;
  }

 private:
  std::mutex mu_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Policy> MakeP2cPolicy(const PolicyOptions& options) {
  return std::make_unique<P2cPolicy>(options.seed);
}

}  // namespace surge::router
