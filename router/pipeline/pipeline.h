// The gateway's request path as a pipeline (DESIGN.md "Router"): six stages, one file
// each, run in the order that pipeline.cc's table writes down, sharing one RequestContext.
// A stage answers the request (kDone), hands it on (kNext), or pauses it (kPaused: a cache
// lookup on a Redis worker, a tier queue, a backend attempt) and resumes it later with
// ResumeAfter; a failed attempt goes round again from kPolicy.
#pragma once

#include <cstddef>
#include <memory>

#include "net/http_types.h"
#include "net/response_writer.h"
#include "router/proxy.h"

namespace surge::router {

struct RequestContext;

enum class StageResult { kNext, kDone, kPaused };

// In pipeline order.
enum class StageId : size_t {
  kAuthAndLimits,  // auth_limits_stage.cc: API key, tier, rate limits (RequestGate::Check)
  kResponseCache,  // cache_stage.cc: plan, lookup, answer a hit
  kPoolChoice,     // pool_choice_stage.cc: the tier's pool (borrowing), else the model's
  kTierAdmission,  // admission_stage.cc: the pool's weighted tier queue
  kPolicy,         // policy_stage.cc: one routable backend of the pool, by its policy
  kForward,        // forward_stage.cc: send, stream or hold, retry from kPolicy
  kNumStages,
};

// A new request: its context prepared, then every stage from the first.
void StartPipeline(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer);
// Runs the stages from `first` until one answers or pauses.
void RunStages(RequestContext& context, StageId first);
// A paused stage is done with the request: the stages after it run (on the caller's thread).
void ResumeAfter(RequestContext& context, StageId paused);

}  // namespace surge::router
