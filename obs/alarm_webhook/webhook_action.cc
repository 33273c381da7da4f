#include "obs/alarm_webhook/webhook_action.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>

#include "base/periodic_thread.h"
#include "net/http_client.h"
#include "net/url.h"
#include "obs/alarms/prometheus_export.h"

namespace surge::obs {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxQueued = 256;
constexpr int64_t kMaxBackoffMs = 30'000;

class WebhookSender {
 public:
  explicit WebhookSender(AlarmAction action) : action_(std::move(action)), client_(net::HttpClientOptions{.connect_timeout_ms = action_.timeout.count()}) {
    thread_.Start([this] { return DeliverNext(); });
  }
  ~WebhookSender() {
    std::deque<Item> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      dropped.swap(queue_);
    }
    thread_.Stop();
    for (Item& item : dropped) item.done(UnavailableError("shutting down before the POST"), "");
  }

  void Send(std::string body, ActionDone done) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!closed_ && queue_.size() < kMaxQueued) {
        queue_.push_back({std::move(body), std::move(done)});
        thread_.Wake();
        return;
      }
    }
    done(ResourceExhaustedError("webhook queue full, alert dropped"), "");
  }

 private:
  struct Item {
    std::string body;
    ActionDone done;
  };

  // The oldest queued alert, if any; then at once again, or idle until Send wakes the thread.
  PeriodicThread::Duration DeliverNext() {
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.empty()) return std::chrono::hours(24);
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Deliver(item);
    return PeriodicThread::Duration::zero();
  }

  // One POST with retries; 2xx is success, 429 / 5xx / no answer are retried.
  void Deliver(Item& item) {
    int64_t backoff_ms = action_.backoff.count();
    std::string last;
    for (int attempt = 1;; ++attempt) {
      net::ClientRequest request;
      request.method = "POST";
      request.url = action_.url;
      request.headers.Set("Content-Type", "application/json");
      request.body = item.body;
      request.timeout_ms = action_.timeout.count();
      request.read_timeout_ms = action_.timeout.count();
      StatusOr<net::HttpResponse> response = client_.Fetch(std::move(request));
      const bool ok = response.ok() && response->status >= 200 && response->status < 300;
      last = response.ok() ? "HTTP " + std::to_string(response->status) : response.status().message();
      if (ok) return item.done(OkStatus(), last + " after " + std::to_string(attempt) + " attempt(s)");
      const bool retryable = !response.ok() || response->status == 429 || response->status >= 500;
      if (!retryable || attempt > action_.num_retries || !Backoff(backoff_ms)) break;
      backoff_ms = std::min(backoff_ms * 2, kMaxBackoffMs);
    }
    item.done(UnavailableError(last + " (POST " + action_.url + ")"), "");
  }

  bool Backoff(int64_t ms) { return thread_.SleepFor(std::chrono::milliseconds(ms)); }

  const AlarmAction action_;
  net::HttpClient client_;
  std::mutex mu_;
  std::deque<Item> queue_;  // guarded by mu_
  bool closed_ = false;     // guarded by mu_: the destructor has taken the queue
  PeriodicThread thread_;
};

}  // namespace

Json WebhookPayload(const AlarmRule& rule, const AlertEvent& event, const std::string& generator) {
  const bool firing = event.to == AlertState::kFiring;
  Labels labels = event.group;
  labels["alertname"] = rule.name;
  labels["severity"] = rule.severity;
  Json annotations{{"description", AlertExpressionPromQL(rule)}};
  if (!rule.summary.empty()) annotations["summary"] = rule.summary;
  Json alert{{"status", firing ? "firing" : "resolved"},
             {"labels", labels},
             {"annotations", annotations},
             {"startsAt", FormatRfc3339(event.firing_since_ms)},
             // Alertmanager's zero time: "not ended yet".
             {"endsAt", firing ? std::string("0001-01-01T00:00:00Z") : FormatRfc3339(event.resolved_at_ms)},
             {"generatorURL", generator},
             {"value", std::isfinite(event.value) ? Json(event.value) : Json(std::to_string(event.value))}};
  Labels group_labels{{"alertname", rule.name}};
  return {{"version", "4"}, {"status", alert["status"]}, {"receiver", "surge"}, {"groupKey", rule.name},
          {"groupLabels", group_labels}, {"commonLabels", labels}, {"commonAnnotations", annotations},
          {"truncatedAlerts", 0}, {"externalURL", ""}, {"alerts", Json::array({alert})}};
}

StatusOr<AlarmActionFunction> MakeWebhookAction(const AlarmRule& rule) {
  StatusOr<net::Url> url = net::ParseUrl(rule.action.url);
  if (!url.ok()) return InvalidArgumentError("webhook url: " + url.status().message());
  auto sender = std::make_shared<WebhookSender>(rule.action);
  return AlarmActionFunction([sender](const AlarmRule& r, const AlertEvent& event, ActionDone done) {
    sender->Send(WebhookPayload(r, event, "surge").dump(), std::move(done));
  });
}

}  // namespace surge::obs
