// `surge route --alarm-rules FILE`: the alarm rules on the router's own metrics, with the
// router's actions — scale_up (the --autoscale policy's pool) and restart_instance (a
// spawned worker, named by the alert's backend label) — besides log and webhook.
#pragma once

#include <memory>

#include "fleet/route_autoscaler.h"
#include "obs/alarms/alarm_runner.h"
#include "router/gateway.h"
#include "router/workers/worker_supervisor.h"

namespace surge {

// Refuses a rule whose action this router cannot take (no autoscaler for its pool, no
// spawned workers) naming the rule; serves GET /alarms once started. `workers` and
// `autoscaler` may be null; both must outlive the runner (Stop it first).
StatusOr<std::shared_ptr<obs::AlarmRunner>> StartRouteAlarms(obs::AlarmConfig config, router::Gateway& gateway,
                                                             router::WorkerSupervisor* workers,
                                                             RouteAutoscaler* autoscaler);

}  // namespace surge
