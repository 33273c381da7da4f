#include "router/backend_set.h"

#include <algorithm>
#include <mutex>

#include "net/url.h"

namespace surge::router {

StatusOr<std::unique_ptr<BackendSet>> BackendSet::Create(const RouteConfig& config) {
  std::unique_ptr<BackendSet> set(new BackendSet(config));
  for (const auto& [name, pool_config] : config.pools) {
    StatusOr<std::unique_ptr<Policy>> policy = MakePolicy(pool_config.policy, config.policy_options);
    if (!policy.ok()) return policy.status().WithContext("pool '" + name + "'");
    auto pool = std::make_unique<Pool>();
    pool->name = name;
    pool->config = pool_config;
    pool->policy = std::move(policy).value();
    set->pools_.push_back(std::move(pool));
  }
  for (const BackendConfig& backend : config.backends) {
    Status status = set->AddBackend(backend.pool, backend.url, backend.weight);
    if (!status.ok()) return status;
  }
  return set;
}

BackendSet::Pool* BackendSet::FindPool(std::string_view name) {
  for (auto& pool : pools_) {
    if (pool->name == name) return pool.get();
  }
  return nullptr;
}

const BackendSet::Pool* BackendSet::FindPool(std::string_view name) const {
  return const_cast<BackendSet*>(this)->FindPool(name);
}

Status BackendSet::AddBackend(std::string_view pool_name, std::string_view url, double weight) {
  StatusOr<net::Url> parsed = net::ParseUrl(url);
  if (!parsed.ok()) return parsed.status().WithContext("backend " + std::string(url));
  if (!(weight > 0)) return InvalidArgumentError("backend " + std::string(url) + ": weight must be > 0");
  std::string clean(url);
  while (!clean.empty() && clean.back() == '/') clean.pop_back();  // we append the paths
  std::unique_lock<std::shared_mutex> lock(mu_);
  Pool* pool = FindPool(pool_name);
  if (pool == nullptr) return NotFoundError("no pool named '" + std::string(pool_name) + "'");
  for (const auto& other : pools_) {
    for (const auto& backend : other->backends) {
      if (backend->url() == clean) return InvalidArgumentError("backend " + clean + " is already routed");
    }
  }
  BackendConfig backend{.url = clean, .pool = pool->name, .weight = weight};
  pool->backends.push_back(std::make_shared<Backend>(next_backend_id_++, std::move(backend), config_));
  return OkStatus();
}

Status BackendSet::RemoveBackend(std::string_view url) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (auto& pool : pools_) {
    auto it = std::find_if(pool->backends.begin(), pool->backends.end(),
                           [&](const auto& backend) { return backend->url() == url; });
    if (it == pool->backends.end()) continue;
    (*it)->MarkRemoved();
    pool->policy->OnBackendRemoved((*it)->id());
    pool->backends.erase(it);
    return OkStatus();
  }
  return NotFoundError("no backend " + std::string(url));
}

Status BackendSet::SetDraining(std::string_view url, bool draining) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  for (auto& pool : pools_) {
    for (auto& backend : pool->backends) {
      if (backend->url() != url) continue;
      backend->SetAdminDraining(draining);
      return OkStatus();
    }
  }
  return NotFoundError("no backend " + std::string(url));
}

std::string BackendSet::PoolForModel(std::string_view model) const {
  if (!model.empty()) {
    if (FindPool(model) != nullptr) return std::string(model);
    for (const auto& pool : pools_) {
      const auto& models = pool->config.models;
      if (std::find(models.begin(), models.end(), model) != models.end()) return pool->name;
    }
  }
  return kDefaultPool;
}

std::string_view BackendSet::PolicyName(std::string_view pool_name) const {
  const Pool* pool = FindPool(pool_name);
  return pool == nullptr ? std::string_view("none") : pool->policy->name();
}

std::shared_ptr<Backend> BackendSet::Choose(std::string_view pool_name, const RouteRequest& request,
                                            std::span<const int32_t> tried, PickResult* pick) {
  Pool* pool = FindPool(pool_name);  // pools_ never changes after Create
  if (pool == nullptr) return nullptr;
  const int64_t now_ms = SteadyNowMs();
  std::vector<std::shared_ptr<Backend>> routable;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    routable.reserve(pool->backends.size());
    for (const auto& backend : pool->backends) {
      if (std::find(tried.begin(), tried.end(), backend->id()) != tried.end()) continue;
      if (backend->IsRoutable(now_ms)) routable.push_back(backend);
    }
  }
  if (routable.empty()) return nullptr;
  std::vector<Candidate> candidates;
  candidates.reserve(routable.size());
  for (const auto& backend : routable) {
    candidates.push_back({.backend_id = backend->id(), .url = backend->url(), .weight = backend->weight(),
                          .load = backend->load(), .num_in_flight = backend->num_in_flight(),
                          .backend = backend.get()});
  }
  const PickResult result = pool->policy->Pick(request, candidates);
  const size_t picked = std::min(result.index, candidates.size() - 1);
  if (pick != nullptr) *pick = result;
  routable[picked]->OnAttemptStart(now_ms);
  return routable[picked];
}

bool BackendSet::MaybeEject(Backend& backend, int64_t now_ms) {
  if (!backend.ShouldEject(now_ms)) return false;
  std::shared_lock<std::shared_mutex> lock(mu_);
  const Pool* pool = FindPool(backend.pool());
  if (pool == nullptr) return false;
  int num_other_routable = 0;
  for (const auto& other : pool->backends) {
    if (other.get() != &backend && other->IsRoutable(now_ms)) ++num_other_routable;
  }
  if (num_other_routable == 0) return false;  // never the last one: degraded beats nothing
  backend.Eject(now_ms);
  return true;
}

std::vector<std::shared_ptr<Backend>> BackendSet::Snapshot() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::shared_ptr<Backend>> all;
  for (const auto& pool : pools_) all.insert(all.end(), pool->backends.begin(), pool->backends.end());
  return all;
}

int BackendSet::NumRoutableInPool(std::string_view pool_name, int64_t now_ms) const {
  const Pool* pool = FindPool(pool_name);
  if (pool == nullptr) return 0;
  std::shared_lock<std::shared_mutex> lock(mu_);
  int num = 0;
  for (const auto& backend : pool->backends) num += backend->IsRoutable(now_ms) ? 1 : 0;
  return num;
}

int BackendSet::NumRoutable(int64_t now_ms) const {
  int num = 0;
  for (const auto& backend : Snapshot()) num += backend->IsRoutable(now_ms) ? 1 : 0;
  return num;
}

}  // namespace surge::router
