// WorkerActuator: the autoscaler's hands on the router's own spawned workers, placing each
// replica in a pool's capacity classes (spot, then on-demand). A worker of a preemptible class
// that exits without being asked to was reclaimed: it is retired, its class backs off, and a
// replacement starts in the next class with room; once the back-off ends a replica moves back
// make-before-break (the cheaper one serves before the dearer one is drained).
#pragma once

#include <memory>

#include "fleet/route_autoscaler.h"

namespace surge {

namespace router {
class WorkerSupervisor;
}  // namespace router

std::unique_ptr<ScaleActuator> MakeWorkerActuator(const router::RouteConfig& config, router::WorkerSupervisor& workers);

}  // namespace surge
