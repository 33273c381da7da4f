// Stage 5, policy: BackendSet::Choose filters the pool's routable backends not yet tried
// and asks the pool's policy for one (router/policy.h). No backend left: 503, or -- after
// failed attempts -- the last failure. Every retry comes back here.
#include <chrono>

#include "router/backend_set.h"
#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {
namespace {

void FinishNoBackend(RequestContext& context) {
  if (context.backend != nullptr) return context.FinishAfterFailure();  // tried some; none left to try
  if (context.generates && context.body_problem != nullptr) {
    // An engine would answer it with a 400; with none for model "" the body is still the
    // client's mistake, not the fleet's (it names no model to route by).
    return context.FinishWithError(400, std::string("the request body ") + context.body_problem +
                                            ", so it names no model to route by");
  }
  context.ctx.metrics.CountNoBackend(context.pool);
  context.error_kind = "no_backend";
  context.FinishWithError(503, "no routable backend in pool '" + context.pool + "'");
}

}  // namespace

StageResult RunPolicy(RequestContext& context) {
  ProxyContext& ctx = context.ctx;
  if (context.ClientGone()) {
    context.Finish(context.backend ? context.backend->url() : "none", 499);
    return StageResult::kDone;
  }
  if (ctx.stopping.load()) {
    context.error_kind = "no_backend";  // none will take it: the router is stopping
    context.FinishWithError(503, "the router is shutting down");
    return StageResult::kDone;
  }
  const auto decision_start = std::chrono::steady_clock::now();
  PickResult pick(0);
  std::shared_ptr<Backend> backend = ctx.backends.Choose(context.pool, context.route_request, context.tried, &pick);
  ctx.metrics.ObserveDecisionSeconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - decision_start).count());
  if (backend == nullptr) {
    FinishNoBackend(context);
    return StageResult::kDone;
  }
  ctx.metrics.CountDecision(context.pool, ctx.backends.PolicyName(context.pool), pick);
  if (context.trace->on()) {
    context.trace->Set("surge.decision", pick.decision);
    if (pick.num_prompt_blocks > 0) context.trace->Set("surge.cache_aware.cached_blocks", pick.num_cached_blocks);
  }
  context.backend = std::move(backend);
  context.tried.push_back(context.backend->id());
  ++context.num_attempts;
  context.streaming = false;
  context.head = {};
  context.buffered.clear();
  return StageResult::kNext;
}

}  // namespace surge::router
