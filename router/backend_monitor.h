// BackendMonitor: the active side of health -- every interval, GET /health and GET
// /metrics on each backend (asynchronously, on the shared HttpClient), feeding
// Backend::OnHealthCheck and Backend::SetLoad. A backend whose previous check has not
// answered yet is skipped, so a hung backend costs one pending request, not a pile.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "router/backend.h"
#include "router/route_config.h"

namespace surge::router {

class BackendMonitor {
 public:
  using BackendsFn = std::function<std::vector<std::shared_ptr<Backend>>()>;
  BackendMonitor(HealthConfig config, net::HttpClient& client, BackendsFn backends);
  ~BackendMonitor();  // Stop()

  void Start();
  void Stop();
  // Checks every backend once now and waits (up to the check timeout) for the answers.
  void CheckNow();

 private:
  void Loop();
  // Starts one backend's /health and /metrics requests; `done` runs when both ended.
  void Check(const std::shared_ptr<Backend>& backend, std::function<void()> done);

  const HealthConfig config_;
  net::HttpClient& client_;
  const BackendsFn backends_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;                 // guarded by mu_
  std::set<int32_t> pending_;         // backend ids with a check in flight; guarded by mu_
  std::thread thread_;
};

}  // namespace surge::router
