// Stage 3, pool choice: with tiers on, the tier's own pool or -- while its P95 TTFT is over
// the threshold -- a borrowed one with room (RequestGate::ChoosePool; 503 when no pool of
// the tier has a routable backend); with tiers off, the pool the request's `model` names
// or its alias's complexity rule chose (RequestContext::Prepare, so that a request
// answered before this stage is counted under it).
#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {

StageResult RunPoolChoice(RequestContext& context) {
  RequestGate::PoolChoice choice = context.ctx.gate.ChoosePool(context.pass.tier, context.model_pool, context.ctx.backends);
  {
    std::lock_guard<std::mutex> lock(context.mu);  // the disconnect callback reads the pool
    context.pool = std::move(choice.pool);
  }
  if (choice.refusal) {
    context.Refuse(*choice.refusal);
    return StageResult::kDone;
  }
  return StageResult::kNext;
}

}  // namespace surge::router
