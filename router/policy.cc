#include "router/policy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <mutex>

namespace surge::router {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, PolicyFactory, std::less<>> factories;
};

Registry& GetRegistry() {
  static Registry* registry = [] {
    auto* r = new Registry;
    r->factories["round-robin"] = [](const PolicyOptions&) -> StatusOr<std::unique_ptr<Policy>> {
      return MakeRoundRobinPolicy();
    };
    r->factories["least-load"] = [](const PolicyOptions& o) -> StatusOr<std::unique_ptr<Policy>> {
      return MakeScoringPolicy("least-load", LeastLoadScorers(), o);
    };
    r->factories["p2c"] = [](const PolicyOptions& o) -> StatusOr<std::unique_ptr<Policy>> {
      return MakeP2cPolicy(o);
    };
    r->factories["session"] = [](const PolicyOptions& o) -> StatusOr<std::unique_ptr<Policy>> {
      return MakeSessionPolicy(o);
    };
    r->factories["cache-aware"] = MakeCacheAwarePolicy;
    return r;
  }();
  return *registry;
}

}  // namespace

void RegisterPolicy(std::string name, PolicyFactory factory) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  registry.factories[std::move(name)] = std::move(factory);
}

StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const PolicyOptions& options) {
  PolicyFactory factory;
  {
    Registry& registry = GetRegistry();
    std::lock_guard<std::mutex> lock(registry.mu);
    auto it = registry.factories.find(name);
    if (it != registry.factories.end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const std::string& known_name : PolicyNames()) known += (known.empty() ? "" : ", ") + known_name;
    return InvalidArgumentError("unknown policy '" + std::string(name) + "' (known: " + known + ")");
  }
  return factory(options);
}

std::vector<std::string> PolicyNames() {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry.factories) names.push_back(name);
  return names;
}

double LoadFraction(const Candidate& candidate, const PolicyOptions& options) {
  return LoadFraction(candidate.load, candidate.num_in_flight, options.backend_capacity);
}

double QueueLength(const Candidate& candidate) { return QueueLength(candidate.load, candidate.num_in_flight); }

double RequestLoad(const Candidate& candidate) { return RequestLoad(candidate.load, candidate.num_in_flight); }

std::vector<Scorer> LeastLoadScorers() {
  return {
      {0.6, [](const Candidate& c, const PolicyOptions& o) { return 1.0 - LoadFraction(c, o); }},
      {0.4, [](const Candidate& c, const PolicyOptions&) { return 1.0 / (1.0 + QueueLength(c)); }},
  };
}

std::string SessionKey(const RouteRequest& request, std::string_view header) {
  if (request.headers != nullptr) {
    if (const std::string* value = request.headers->Find(header); value != nullptr && !value->empty()) return *value;
  }
  if (request.body != nullptr && request.body->is_object()) {
    auto it = request.body->find("user");
    if (it != request.body->end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

}  // namespace surge::router
