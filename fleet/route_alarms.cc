#include "fleet/route_alarms.h"

#include "obs/alarm_webhook/webhook_action.h"

namespace surge {
namespace {

using obs::AlarmActionFunction;
using obs::AlarmRule;

obs::AlarmActionFactory ScaleUpFactory(RouteAutoscaler* autoscaler) {
  return [autoscaler](const AlarmRule& rule) -> StatusOr<AlarmActionFunction> {
    const std::string& pool = rule.action.pool;
    if (autoscaler == nullptr) {
      return InvalidArgumentError("scale_up needs an autoscaler: start surge route with --autoscale (pool '" + pool + "')");
    }
    if (!autoscaler->Polices(pool)) return InvalidArgumentError("scale_up: --autoscale does not scale pool '" + pool + "'");
    return AlarmActionFunction([autoscaler, pool](const AlarmRule&, const obs::AlertEvent&, obs::ActionDone done) {
      const Status status = autoscaler->RequestScaleUp(pool);
      done(status, "scale-up requested for pool " + pool);
    });
  };
}

obs::AlarmActionFactory RestartFactory(router::WorkerSupervisor* workers) {
  return [workers](const AlarmRule&) -> StatusOr<AlarmActionFunction> {
    if (workers == nullptr) {
      return InvalidArgumentError("restart_instance restarts spawned workers, and this router spawns none (--spawn N)");
    }
    return AlarmActionFunction([workers](const AlarmRule&, const obs::AlertEvent& event, obs::ActionDone done) {
      auto backend = event.group.find("backend");
      const std::string url = backend == event.group.end() ? "" : backend->second;
      const Status status = workers->Restart(url);
      done(status, "restarting worker " + url);
    });
  };
}

}  // namespace

StatusOr<std::shared_ptr<obs::AlarmRunner>> StartRouteAlarms(obs::AlarmConfig config, router::Gateway& gateway,
                                                             router::WorkerSupervisor* workers,
                                                             RouteAutoscaler* autoscaler) {
  obs::AlarmRunnerOptions options{.process_name = "surge route",
                                  .scrape = [&gateway] { return gateway.ExposeMetrics(); },
                                  .registry = &gateway.metrics_registry()};
  options.factories[obs::AlarmAction::Type::kWebhook] = obs::MakeWebhookAction;
  options.factories[obs::AlarmAction::Type::kScaleUp] = ScaleUpFactory(autoscaler);
  options.factories[obs::AlarmAction::Type::kRestartInstance] = RestartFactory(workers);
  StatusOr<std::unique_ptr<obs::AlarmRunner>> started = obs::AlarmRunner::Start(std::move(config), std::move(options));
  if (!started.ok()) return started.status().WithContext("--alarm-rules");
  std::shared_ptr<obs::AlarmRunner> runner = std::move(started).value();
  gateway.SetAlarmsSource([runner] { return runner->ToJson().dump(); });
  return runner;
}

}  // namespace surge
