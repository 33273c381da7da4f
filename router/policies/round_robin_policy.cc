// round-robin, weighted: nginx's smooth weighted round-robin, so that weights 2:1 give
// A A B spread as A B A, never bursts.
#include <map>
#include <mutex>

#include "router/policy.h"

namespace surge::router {
namespace {

class RoundRobinPolicy final : public Policy {
 public:
  std::string_view name() const override { return "round-robin"; }

  PickResult Pick(const RouteRequest&, std::span<const Candidate> candidates) override {
    std::lock_guard<std::mutex> lock(mu_);
    double total_weight = 0;
    size_t best = 0;
    double best_current = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      double& current = current_[candidates[i].backend_id];
      current += candidates[i].weight;
      total_weight += candidates[i].weight;
      if (i == 0 || current > best_current) {
        best = i;
        best_current = current;
      }
    }
    current_[candidates[best].backend_id] -= total_weight;
    return best;
  }

  void OnBackendRemoved(int32_t backend_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    current_.erase(backend_id);
  }

 private:
  std::mutex mu_;
  std::map<int32_t, double> current_;  // backend id -> its running "current weight"
};

}  // namespace

std::unique_ptr<Policy> MakeRoundRobinPolicy() { return std::make_unique<RoundRobinPolicy>(); }

}  // namespace surge::router
