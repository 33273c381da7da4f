// Stage 2, the response cache: its plan for the request (the body's `cache` field taken
// out), then -- when the request may be answered from it -- the lookup (memory: inline;
// Redis: on its worker thread, which then continues the request). A hit is answered here:
// no admission slot, no backend.
#include "api/error.h"
#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {
namespace {

void ServeHit(RequestContext& context) {
  if (context.ClientGone()) return context.Finish(kCacheBackendLabel, 499);
  context.used_tokens = 0;  // no engine ran: the key's token budget gets its reservation back
  context.cache.WriteHit(*context.writer, context.WithGateHeaders({{"x-request-id", context.request_id}}));
  context.Finish(kCacheBackendLabel, 200);
}

}  // namespace

StageResult RunResponseCache(RequestContext& context) {
  bool field_taken = false;
  const GatePass& pass = context.pass;
  const std::string scope = pass.key != nullptr ? pass.key->tenant : kDefaultTenant;
  const bool key_opts_in = pass.key != nullptr && pass.key->semantic_cache;
  if (Status status = context.cache.Plan(context.ctx.cache, context.request, &context.body, scope,
                                         context.client_model, key_opts_in, &field_taken);
      !status.ok()) {
    const api::ErrorReply reply = api::MakeErrorReply(status);
    context.Refuse({reply.http_status, reply.body, {{"content-type", "application/json"}}});
    return StageResult::kDone;
  }
  context.body_changed = context.body_changed || field_taken;
  context.SyncBody();
  if (!context.cache.should_lookup()) return StageResult::kNext;
  context.cache.Lookup([self = context.shared_from_this()](bool hit) {
    if (hit) return ServeHit(*self);
    ResumeAfter(*self, StageId::kResponseCache);
  });
  return StageResult::kPaused;
}

}  // namespace surge::router
