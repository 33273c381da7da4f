// Stage 4, tier admission: a slot of the pool's weighted tier queue (realtime / normal /
// batch; tiers off: always admitted). A request that must wait pauses here; the queue's
// grant continues it on the DelayQueue's thread. A full queue answers 429.
#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {
namespace {

void OnAdmitted(RequestContext& context) {
  {
    std::lock_guard<std::mutex> lock(context.mu);
    context.queued = false;
  }
  ResumeAfter(context, StageId::kTierAdmission);
}

}  // namespace

StageResult RunTierAdmission(RequestContext& context) {
  auto self = context.shared_from_this();
  RequestGate::Admission admission;
  {
    std::lock_guard<std::mutex> lock(context.mu);  // OnAdmitted waits until ticket and queued are set
    admission = context.ctx.gate.Admit(context.pass.tier, context.pool, [self](TicketId) {
      self->ctx.delays.After(0, [self] { OnAdmitted(*self); });
    });
    context.ticket = admission.ticket;
    context.queued = !admission.refusal && !admission.admitted;
  }
  if (admission.refusal) {
    context.Refuse(*admission.refusal);
    return StageResult::kDone;
  }
  return admission.admitted ? StageResult::kNext : StageResult::kPaused;
}

}  // namespace surge::router
