#include "router/pipeline/pipeline.h"

#include <array>

#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {
namespace {

using StageFunction = StageResult (*)(RequestContext&);

// The order of the request path, written once. The response cache sits after keys and
// limits and before admission: a hit takes no slot and no engine. The pool is chosen
// before admission because each pool has its own tier queue.
constexpr std::array<StageFunction, static_cast<size_t>(StageId::kNumStages)> kStages = {
    RunAuthAndLimits,  // kAuthAndLimits
    RunResponseCache,  // kResponseCache
    RunPoolChoice,     // kPoolChoice
    RunTierAdmission,  // kTierAdmission
    RunPolicy,         // kPolicy
    RunForward,        // kForward
};

}  // namespace

void StartPipeline(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
  auto request_context = std::make_shared<RequestContext>(context, std::move(request), std::move(writer));
  request_context->Prepare();
  RunStages(*request_context, StageId::kAuthAndLimits);
}

void RunStages(RequestContext& context, StageId first) {
  // A stage that pauses holds the context itself (a callback's shared_ptr); this one keeps
  // it alive until the loop is done with it.
  const std::shared_ptr<RequestContext> hold = context.shared_from_this();
  for (size_t i = static_cast<size_t>(first); i < kStages.size(); ++i) {
    if (kStages[i](context) != StageResult::kNext) return;
  }
}

void ResumeAfter(RequestContext& context, StageId paused) {
  RunStages(context, static_cast<StageId>(static_cast<size_t>(paused) + 1));
}

}  // namespace surge::router
