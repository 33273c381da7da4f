// `surge route`'s flags: each maps onto the route config (router/route_config.h) through the
// config's own parser, so a flag and its config key are checked by the same code; the
// autoscale policy, alarm rules, Batch API and queue flags become their options.
#pragma once

#include <string>
#include <vector>

#include "apps/route_runtime.h"
#include "base/status.h"

namespace surge {

struct RouteArgs {
  bool help = false;
  std::string usage;  // the flags' help text
  RouteSetup setup;   // the rest: only when !help
};

// Defaults, then --config FILE, then flags; then the files the flags name. Errors name the
// flag (exit status 2).
StatusOr<RouteArgs> ParseRouteArgs(const std::vector<std::string>& raw_args);

}  // namespace surge
