// Stage 1, auth and limits: the API key (401), the tier (400 on a bad X-Priority /
// priority) and the key's rate limits (429), all in RequestGate::Check.
#include <string_view>

#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {
namespace {

// Paths that generate tokens: charged max_tokens by the limiter, timed for TTFT.
bool IsGenerationPath(std::string_view path) {
  return path == "/v1/completions" || path == "/v1/chat/completions" || path == "/v1/responses";
}

}  // namespace

StageResult RunAuthAndLimits(RequestContext& context) {
  context.generates = context.request.method == "POST" && IsGenerationPath(context.request.path);
  bool body_changed = false;  // the tier forwarded as `priority`
  if (auto refusal = context.ctx.gate.Check(context.request, &context.body, context.generates, &context.pass,
                                            &body_changed)) {
    context.Refuse(*refusal);
    return StageResult::kDone;
  }
  context.body_changed = context.body_changed || body_changed;
  return StageResult::kNext;
}

}  // namespace surge::router
