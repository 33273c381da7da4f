// A policy that scores every candidate with weighted scorers and takes the best; least-load
// is its preset. Ties rotate, so equally idle backends share a burst of requests that all
// arrive before any load shows.
#include <atomic>

#include "router/policy.h"

namespace surge::router {
namespace {

class ScoringPolicy final : public Policy {
 public:
  ScoringPolicy(std::string name, std::vector<Scorer> scorers, PolicyOptions options)
      : name_(std::move(name)), scorers_(std::move(scorers)), options_(std::move(options)) {}

  std::string_view name() const override { return name_; }

  PickResult Pick(const RouteRequest&, std::span<const Candidate> candidates) override {
    const size_t start = next_.fetch_add(1, std::memory_order_relaxed) % candidates.size();
    size_t best = start;
    double best_score = -1e300;
    for (size_t n = 0; n < candidates.size(); ++n) {
      const size_t i = (start + n) % candidates.size();
      double score = 0;
      for (const Scorer& scorer : scorers_) score += scorer.weight * scorer.score(candidates[i], options_);
      if (score > best_score + 1e-12) {
        best = i;
        best_score = score;
      }
    }
    return best;
  }

 private:
  const std::string name_;
  const std::vector<Scorer> scorers_;
  const PolicyOptions options_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace

std::unique_ptr<Policy> MakeScoringPolicy(std::string name, std::vector<Scorer> scorers, PolicyOptions options) {
  return std::make_unique<ScoringPolicy>(std::move(name), std::move(scorers), std::move(options));
}

}  // namespace surge::router
