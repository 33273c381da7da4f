// session: affinity on a key (a header, default x-session-id, or the body's "user") by
// weighted rendezvous hashing -- each key goes to the candidate with the highest
// hash(key, backend) score. When a backend fails, only the keys it held move (to their
// second-best backend) and they come back when it returns; no ring to rebuild. Requests
// without a key go to least-load.
#include <cmath>

#include "router/policy.h"

namespace surge::router {
namespace {

uint64_t Fnv1a(std::string_view text, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer: spreads FNV's weak low bits
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class SessionPolicy final : public Policy {
 public:
  explicit SessionPolicy(const PolicyOptions& options)
      : header_(options.session_header), fallback_(MakeScoringPolicy("least-load", LeastLoadScorers(), options)) {}

  std::string_view name() const override { return "session"; }

  PickResult Pick(const RouteRequest& request, std::span<const Candidate> candidates) override {
    const std::string key = SessionKey(request, header_);
    if (key.empty()) return fallback_->Pick(request, candidates);
    const uint64_t key_hash = Fnv1a(key);
    size_t best = 0;
    double best_score = -1e300;
    for (size_t i = 0; i < candidates.size(); ++i) {
      // Weighted rendezvous: -w / ln(u), u uniform in (0, 1) from the pair's hash.
      const uint64_t h = Mix(Fnv1a(candidates[i].url, key_hash));
      const double unit = (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;
      const double score = -candidates[i].weight / std::log(unit);
      if (score > best_score) {
        best = i;
        best_score = score;
      }
    }
    return best;
  }

 private:
  const std::string header_;
  const std::unique_ptr<Policy> fallback_;
};

}  // namespace

std::unique_ptr<Policy> MakeSessionPolicy(const PolicyOptions& options) {
  return std::make_unique<SessionPolicy>(options);
}

}  // namespace surge::router
