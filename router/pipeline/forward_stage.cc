// Stage 6, forward: the request goes to the chosen backend. A 200 text/event-stream head
// starts the client's stream at once (no retry from there: the client has bytes; a failure
// mid-stream ends it with an SSE error event and [DONE]); anything else is held until its
// body is complete, so that a failure before the client saw a byte (connect error,
// timeout, 5xx, 429) is retried on another backend after a jittered back-off, from the
// policy stage. The client leaving cancels the attempt at once (RequestContext).
#include <algorithm>
#include <random>

#include "base/json_access.h"
#include "net/sse.h"
#include "router/auth/token_estimate.h"
#include "router/backend_set.h"
#include "router/forward_headers.h"
#include "router/pipeline/request_context.h"
#include "router/pipeline/stages.h"

namespace surge::router {
namespace {

using Context = std::shared_ptr<RequestContext>;

constexpr size_t kMaxBufferedBytes = 256 << 20;  // a non-streamed response body

// 504 is the engine ending a request at its own deadline (`timeout`): another backend
// would only spend the same time again.
bool IsRetryableStatus(int status) { return status == 429 || (status >= 500 && status != 504); }

bool IsEventStream(const net::HttpResponse& head) {
  const std::string* type = head.headers.Find("content-type");
  return head.status == 200 && type != nullptr && type->rfind("text/event-stream", 0) == 0;
}

int64_t BackoffMs(const RetryConfig& retry, int64_t num_failed_attempts) {
  const int64_t shift = std::min<int64_t>(num_failed_attempts - 1, 20);
  const int64_t cap = std::min(retry.backoff_max_ms, retry.backoff_base_ms << shift);
  if (cap <= 0) return 0;
  thread_local std::mt19937_64 rng(std::random_device{}());
  return std::uniform_int_distribution<int64_t>(0, cap)(rng);  // full jitter
}

int64_t UsedTokens(const std::string& body) {
  // The engine's answer: depth-bounded before parsing (base/json_access.h).
  StatusOr<json::Json> response = json::Parse(body, "the backend's answer", kMaxFileJsonDepth);
  if (!response.ok()) return -1;
  std::optional<int64_t> total = UsageTotalTokens(*response);
  return total ? *total : -1;
}

void OnHead(RequestContext& c, const net::HttpResponse& head) {
  if (!IsEventStream(head)) {
    c.head = head;  // buffered: retryable until the whole body is here
    return;
  }
  c.streaming = true;  // from here on the client has bytes: no retry
  c.writer->StartStream(200, c.WithGateHeaders(ClientResponseHeaders(head.headers, c.backend->url(), c.request_id)));
}

bool OnData(RequestContext& c, std::string_view data) {
  if (c.streaming) {
    if (!c.first_byte) c.first_byte = std::chrono::steady_clock::now();
    c.cache.OnStreamData(data);
    return c.writer->Write(data);  // false: the client left, cancel
  }
  if (c.buffered.size() + data.size() > kMaxBufferedBytes) return false;
  c.buffered.append(data);
  return true;
}

void EndStream(RequestContext& c, const Status& status, int64_t now_ms) {
  c.backend->OnAttemptEnd(status.ok() ? AttemptOutcome::kSuccess : AttemptOutcome::kFailure, now_ms);
  c.cache.OnStreamEnd(status.ok());
  if (!status.ok()) {
    // Bytes already reached the client, so no retry: end the stream the way an OpenAI
    // client understands, instead of cutting it off.
    c.writer->Write(net::EncodeSseData(net::ErrorJson(
        GatewayStatusFor(status), "backend " + c.backend->url() + " failed mid-stream: " + status.message())));
    c.writer->Write(net::EncodeSseData("[DONE]"));
    c.ctx.metrics.CountStreamError(c.backend->url());
    c.error_kind = status.code() == StatusCode::kDeadlineExceeded ? "timeout" : "backend_error";
    if (c.ctx.backends.MaybeEject(*c.backend, now_ms)) c.ctx.metrics.CountEjection(c.backend->url());
  }
  c.writer->End();
  c.Finish(c.backend->url(), 200);
}

void RetryOrFail(RequestContext& c) {
  if (c.num_attempts <= c.ctx.config.retry.max_retries && !c.ctx.stopping.load()) {
    c.ctx.metrics.CountRetry(c.pool);
    const int64_t delay_ms = BackoffMs(c.ctx.config.retry, c.num_attempts);
    if (delay_ms == 0) return RunStages(c, StageId::kPolicy);
    c.ctx.delays.After(delay_ms, [self = c.shared_from_this()] { RunStages(*self, StageId::kPolicy); });
    return;
  }
  c.FinishAfterFailure();
}

void OnDone(RequestContext& c, net::ClientResult result) {
  const int64_t now_ms = SteadyNowMs();
  c.trace->EndAttempt(result.status.ok() ? result.response.status : 0, result.status);
  if (c.ClientGone()) {
    c.backend->OnAttemptEnd(AttemptOutcome::kNeutral, now_ms);
    if (c.streaming) c.writer->End();
    return c.Finish(c.backend->url(), 499);
  }
  if (c.streaming) return EndStream(c, result.status, now_ms);
  const int status = result.status.ok() ? result.response.status : 0;
  if (result.status.ok() && !IsRetryableStatus(status)) {
    c.backend->OnAttemptEnd(AttemptOutcome::kSuccess, now_ms);
    // (A whole answer's first token is its last: its first byte is stamped in Finish.)
    if (status == 200 && c.pass.limit.reserved_tokens > 0) c.used_tokens = UsedTokens(c.buffered);
    c.cache.OnWholeAnswer(status, c.buffered);
    c.writer->Send(status, c.WithGateHeaders(ClientResponseHeaders(c.head.headers, c.backend->url(), c.request_id)),
                   std::move(c.buffered));
    return c.Finish(c.backend->url(), status);
  }
  // 429 is the engine protecting itself, not failing: no breaker strike.
  c.backend->OnAttemptEnd(status == 429 ? AttemptOutcome::kNeutral : AttemptOutcome::kFailure, now_ms);
  if (status != 429 && c.ctx.backends.MaybeEject(*c.backend, now_ms)) c.ctx.metrics.CountEjection(c.backend->url());
  c.last_status = result.status;
  c.last_response_status = status;
  RetryOrFail(c);
}

}  // namespace

StageResult RunForward(RequestContext& context) {
  const TimeoutConfig& timeouts = context.ctx.config.timeouts;
  net::ClientRequest request{.method = context.request.method,
                             .url = context.backend->url() + context.request.target,
                             .headers = context.headers,
                             .body = context.request.body,
                             .timeout_ms = timeouts.total_ms,
                             .read_timeout_ms = timeouts.idle_ms,
                             .first_byte_timeout_ms = timeouts.first_byte_ms};
  if (context.trace->on()) request.headers.Set("traceparent", context.trace->StartAttempt(context.backend->url()));
  Context self = context.shared_from_this();
  net::ClientCallbacks callbacks{
      .on_head = [self](const net::HttpResponse& head) { OnHead(*self, head); },
      .on_data = [self](std::string_view data, net::SteadyTime) { return OnData(*self, data); },
      .on_done = [self](net::ClientResult result) { OnDone(*self, std::move(result)); }};
  const net::RequestId id = context.ctx.client.Send(std::move(request), std::move(callbacks));
  bool gone;
  {
    std::lock_guard<std::mutex> lock(context.mu);
    context.attempt_id = id;
    gone = context.client_gone;
  }
  if (gone) context.ctx.client.Cancel(id);  // the client left between the policy stage and here
  return StageResult::kPaused;
}

}  // namespace surge::router
