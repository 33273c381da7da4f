// BackendSet: the pools, their policies and their backends, changeable at run time from
// any thread (AddBackend / RemoveBackend / SetDraining: the worker supervisor and the
// autoscaler call these), and the routing decision over them (Choose).
#pragma once

#include <memory>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "router/backend.h"
#include "router/policy.h"
#include "router/route_config.h"

namespace surge::router {

class BackendSet {
 public:
  // Makes each pool's policy (an unknown policy name is INVALID_ARGUMENT naming it and
  // its pool) and adds the configured backends. `config` must outlive the set.
  static StatusOr<std::unique_ptr<BackendSet>> Create(const RouteConfig& config);

  // NOT_FOUND for a pool that was not configured; ALREADY-present URL: INVALID_ARGUMENT.
  Status AddBackend(std::string_view pool, std::string_view url, double weight);
  // New requests stop at once; requests on it finish (they hold the Backend).
  Status RemoveBackend(std::string_view url);
  Status SetDraining(std::string_view url, bool draining);

  // The pool a request's `model` selects: a pool of that name, else a pool that lists the
  // model, else the default pool.
  std::string PoolForModel(std::string_view model) const;
  std::string_view PolicyName(std::string_view pool) const;

  // A routable backend of `pool` not in `tried` (ids), chosen by the pool's policy, with
  // its attempt already started (in-flight count, breaker probe); null when none is left.
  // `pick` (optional) receives the policy's result.
  std::shared_ptr<Backend> Choose(std::string_view pool, const RouteRequest& request,
                                  std::span<const int32_t> tried, PickResult* pick = nullptr);
  // Eject a backend whose error rate says so, unless it is its pool's last routable one.
  bool MaybeEject(Backend& backend, int64_t now_ms);

  std::vector<std::shared_ptr<Backend>> Snapshot() const;  // every current backend
  int NumRoutable(int64_t now_ms) const;
  int NumRoutableInPool(std::string_view pool, int64_t now_ms) const;  // 0 for an unknown pool

 private:
  struct Pool {
    std::string name;
    PoolConfig config;
    std::unique_ptr<Policy> policy;
    std::vector<std::shared_ptr<Backend>> backends;
  };
  explicit BackendSet(const RouteConfig& config) : config_(config) {}
  Pool* FindPool(std::string_view name);
  const Pool* FindPool(std::string_view name) const;

  const RouteConfig& config_;
  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<Pool>> pools_;  // fixed after Create; their backends change
  int32_t next_backend_id_ = 0;               // guarded by mu_
};

}  // namespace surge::router
