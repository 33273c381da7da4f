#include "router/backend_monitor.h"

#include <atomic>
#include <future>

#include "router/engine_metrics.h"

namespace surge::router {
namespace {

// A refused answer leaves the load unknown: a stale one would mislead the policies.
void OnMetrics(Backend& backend, std::string_view body) {
  StatusOr<EngineLoad> load = ParseEngineLoad(body);
  if (!load.ok()) backend.RefuseAnswer(BackendAnswer::kMetrics, load.status());
  backend.SetLoad(load.ok() ? *load : EngineLoad{});
}

}  // namespace

BackendMonitor::BackendMonitor(HealthConfig config, net::HttpClient& client, BackendsFn backends)
    : config_(config), client_(client), backends_(std::move(backends)) {}

BackendMonitor::~BackendMonitor() { Stop(); }

void BackendMonitor::Start() { thread_ = std::thread([this] { Loop(); }); }

void BackendMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackendMonitor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    for (const std::shared_ptr<Backend>& backend : backends_()) Check(backend, [] {});
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(config_.interval_ms), [this] { return stop_; });
  }
}

void BackendMonitor::CheckNow() {
  std::vector<std::shared_ptr<Backend>> backends = backends_();
  auto remaining = std::make_shared<std::atomic<size_t>>(backends.size());
  auto all_done = std::make_shared<std::promise<void>>();
  std::future<void> future = all_done->get_future();
  if (backends.empty()) return;
  for (const std::shared_ptr<Backend>& backend : backends) {
    Check(backend, [remaining, all_done] {
      if (remaining->fetch_sub(1) == 1) all_done->set_value();
    });
  }
  future.wait_for(std::chrono::milliseconds(2 * config_.timeout_ms + 100));
}

void BackendMonitor::Check(const std::shared_ptr<Backend>& backend, std::function<void()> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pending_.insert(backend->id()).second) {
      done();
      return;
    }
  }
  // Both requests share `remaining`; the second to end clears the pending mark.
  auto remaining = std::make_shared<std::atomic<int>>(2);
  auto finish = [this, id = backend->id(), remaining, done = std::move(done)] {
    if (remaining->fetch_sub(1) != 1) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.erase(id);
    }
    done();
  };
  net::ClientRequest health{.method = "GET", .url = backend->url() + "/health", .timeout_ms = config_.timeout_ms};
  client_.Send(std::move(health), {.on_done = [this, backend, finish](net::ClientResult result) {
                                     backend->OnHealthCheck(result.status.ok() ? result.response.status : 0, config_);
                                     finish();
                                   }});
  net::ClientRequest metrics{.method = "GET", .url = backend->url() + "/metrics", .timeout_ms = config_.timeout_ms};
  client_.Send(std::move(metrics), {.on_done = [backend, finish](net::ClientResult result) {
                                      if (result.status.ok() && result.response.status == 200) {
                                        OnMetrics(*backend, result.response.body);
                                      }
                                      finish();
                                    }});
}

}  // namespace surge::router
