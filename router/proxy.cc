#include "router/proxy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>

#include "api/error.h"
#include "base/json_access.h"
#include "net/sse.h"
#include "router/auth/token_estimate.h"
#include "router/forward_headers.h"
#include "router/proxy_cache.h"
#include "router/route_trace.h"
#include "router/tiers/tier.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxBufferedBytes = 256 << 20;  // a non-streamed response body

// 504 is the engine ending a request at its own deadline (`timeout`): another backend
// would only spend the same time again.
bool IsRetryableStatus(int status) { return status == 429 || (status >= 500 && status != 504); }

double SecondsBetween(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Paths that generate tokens: charged max_tokens by the limiter, timed for TTFT.
bool IsGenerationPath(std::string_view path) {
  return path == "/v1/completions" || path == "/v1/chat/completions" || path == "/v1/responses";
}

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

// One client request across its attempts. Attempt state is written before each Send and
// then touched only by that attempt's callbacks (on the client's io thread); `mu_` guards
// what the server's io thread (client disconnect) shares with them.
class ProxyCall : public std::enable_shared_from_this<ProxyCall> {
 public:
  ProxyCall(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer)
      : ctx_(context), request_(std::move(request)), writer_(std::move(writer)) {}

  void Start() {
    ParseBody();
    const std::string* id = request_.headers.Find("x-request-id");
    request_id_ = id != nullptr && !id->empty() ? *id : MakeRequestId();
    headers_ = BackendRequestHeaders(request_.headers, ctx_.config.forward_authorization,
                                     ctx_.config.policy_options.session_header, request_id_);
    trace_.emplace(ctx_.tracer, request_.headers, request_.method, request_.path);
    writer_->OnClose([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->OnClientClosed();
    });
    if (!PassGate()) return;
    if (!cache_.should_lookup()) return AdmitAndAttempt();
    // The response cache sits after keys and limits and before tier admission (DESIGN.md):
    // a hit takes no slot and no engine.
    cache_.Lookup([self = shared_from_this()](bool hit) {
      if (hit) return self->ServeHit();
      self->AdmitAndAttempt();
    });
  }

 private:
  // Keys, limits and tier (RequestGate), then the cache's decision; false when the request
  // was refused.
  bool PassGate() {
    generates_ = request_.method == "POST" && IsGenerationPath(request_.path);
    bool body_changed = false;
    if (auto refusal = ctx_.gate.Check(request_, &body_, generates_, &pass_, &body_changed)) {
      Refuse(*refusal);
      return false;
    }
    bool cache_field_taken = false;
    const std::string scope = pass_.key != nullptr ? pass_.key->tenant : kDefaultTenant;
    const bool key_opts_in = pass_.key != nullptr && pass_.key->semantic_cache;
    if (Status status = cache_.Plan(ctx_.cache, request_, &body_, scope, client_model_, key_opts_in, &cache_field_taken);
        !status.ok()) {
      const api::ErrorReply reply = api::MakeErrorReply(status);
      Refuse({reply.http_status, reply.body, {{"content-type", "application/json"}}});
      return false;
    }
    if (body_changed || cache_field_taken) {
      request_.body = body_.dump(-1, ' ', false, Json::error_handler_t::replace);
      route_request_.raw_body = request_.body;
    }
    return true;
  }

  void AdmitAndAttempt() {
    if (Admit()) Attempt();
  }

  void ServeHit() {
    if (ClientGone()) return Count(kCacheBackendLabel, 499);
    used_tokens_ = 0;  // no engine ran: the key's token budget gets its reservation back
    cache_.WriteHit(*writer_, WithGateHeaders({{"x-request-id", request_id_}}));
    Count(kCacheBackendLabel, 200);
  }

  // Tier admission (RequestGate); false when the request is answered (refused) or waits in
  // its tier's queue (OnAdmitted continues it).
  bool Admit() {
    auto self = shared_from_this();
    RequestGate::Admission admission;
    {
      std::lock_guard<std::mutex> lock(mu_);  // OnAdmitted waits until ticket_ and pool_ are set
      admission = ctx_.gate.Admit(pass_.tier, pool_, ctx_.backends, [self](TicketId) {
        self->ctx_.delays.After(0, [self] { self->OnAdmitted(); });
      });
      pool_ = admission.pool;
      ticket_ = admission.ticket;
      queued_ = !admission.refusal && !admission.admitted;
    }
    if (admission.refusal) {
      Refuse(*admission.refusal);
      return false;
    }
    return admission.admitted;
  }

  void OnAdmitted() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queued_ = false;
    }
    Attempt();
  }

  void Refuse(const GateRefusal& refusal) {
    net::HttpHeaders headers = WithGateHeaders(refusal.headers);
    headers.Set("x-request-id", request_id_);
    writer_->Send(refusal.status, std::move(headers), refusal.body);
    Count("none", refusal.status);
  }

  // Adds the gate's headers (x-ratelimit-*) and the route span's traceparent to a response's.
  net::HttpHeaders WithGateHeaders(net::HttpHeaders headers) const {
    for (const auto& [name, value] : pass_.headers) headers.Set(name, value);
    if (const char* cache = cache_.header()) headers.Set("x-surge-cache", cache);
    if (trace_->on()) headers.Set("traceparent", trace_->traceparent());
    return headers;
  }

  void ParseBody() {
    const size_t first = request_.body.find_first_not_of(" \t\r\n");
    // A body nested deeper than any engine takes is passed on unparsed (the engine answers
    // it with a 400), so no recursive copy or dump here can run out of stack.
    if (first != std::string::npos && request_.body[first] == '{' && JsonDepthWithin(request_.body)) {
      body_ = Json::parse(request_.body, nullptr, /*allow_exceptions=*/false);
      if (body_.is_discarded()) body_ = nullptr;  // the engine answers it with a 400
      if (body_.is_null()) body_problem_ = "is not valid JSON";
    } else {
      body_problem_ = first == std::string::npos || request_.body[first] != '{' ? "is not a JSON object"
                                                                               : "is nested too deeply";
    }
    std::string model;
    if (body_.is_object()) {
      auto it = body_.find("model");
      if (it != body_.end() && it->is_string()) model = it->get<std::string>();
    }
    client_model_ = model;
    if (auto alias = ctx_.config.aliases.find(model); alias != ctx_.config.aliases.end()) {
      const ComplexityChoice choice = ChoosePoolByComplexity(alias->second, body_);
      pool_ = *choice.pool;
      ctx_.metrics.CountAliasRoute(model, pool_, choice.reason);
      body_.erase("model");  // the pool's engines answer with their own model's name
      request_.body = body_.dump(-1, ' ', false, Json::error_handler_t::replace);
    } else {
      pool_ = ctx_.backends.PoolForModel(model);
    }
    route_request_ = {.path = request_.path, .body = body_.is_object() ? &body_ : nullptr,
                      .raw_body = request_.body, .headers = &request_.headers};
  }

  bool ClientGone() {
    std::lock_guard<std::mutex> lock(mu_);
    return client_gone_;
  }

  void Attempt() {
    if (ClientGone()) return Count(backend_ ? backend_->url() : "none", 499);
    if (ctx_.stopping.load()) {
      error_kind_ = "no_backend";  // none will take it: the router is stopping
      return FinishWithError(503, "the router is shutting down");
    }
    const auto decision_start = std::chrono::steady_clock::now();
    PickResult pick(0);
    std::shared_ptr<Backend> backend = ctx_.backends.Choose(pool_, route_request_, tried_, &pick);
    ctx_.metrics.ObserveDecisionSeconds(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - decision_start).count());
    if (backend == nullptr) return FinishNoBackend();
    ctx_.metrics.CountDecision(pool_, ctx_.backends.PolicyName(pool_), pick);
    if (trace_->on()) {
      trace_->Set("surge.decision", pick.decision);
      if (pick.num_prompt_blocks > 0) trace_->Set("surge.cache_aware.cached_blocks", pick.num_cached_blocks);
    }
    backend_ = std::move(backend);
    tried_.push_back(backend_->id());
    ++num_attempts_;
    streaming_ = false;
    head_ = {};
    buffered_.clear();
    Send();
  }

  void Send() {
    const TimeoutConfig& timeouts = ctx_.config.timeouts;
    net::ClientRequest request{.method = request_.method, .url = backend_->url() + request_.target,
                               .headers = headers_, .body = request_.body, .timeout_ms = timeouts.total_ms,
                               .read_timeout_ms = timeouts.idle_ms, .first_byte_timeout_ms = timeouts.first_byte_ms};
    if (trace_->on()) request.headers.Set("traceparent", trace_->StartAttempt(backend_->url()));
    auto self = shared_from_this();
    net::ClientCallbacks callbacks{
        .on_head = [self](const net::HttpResponse& head) { self->OnHead(head); },
        .on_data = [self](std::string_view data, net::SteadyTime) { return self->OnData(data); },
        .on_done = [self](net::ClientResult result) { self->OnDone(std::move(result)); }};
    const net::RequestId id = ctx_.client.Send(std::move(request), std::move(callbacks));
    bool gone;
    {
      std::lock_guard<std::mutex> lock(mu_);
      attempt_id_ = id;
      gone = client_gone_;
    }
    if (gone) ctx_.client.Cancel(id);  // the client left between Attempt and here
  }

  void OnHead(const net::HttpResponse& head) {
    if (!IsEventStream(head)) {
      head_ = head;  // buffered: retryable until the whole body is here
      return;
    }
    streaming_ = true;  // from here on the client has bytes: no retry
    writer_->StartStream(200, WithGateHeaders(ClientResponseHeaders(head.headers, backend_->url(), request_id_)));
  }

  bool OnData(std::string_view data) {
    if (streaming_) {
      if (!first_byte_) first_byte_ = std::chrono::steady_clock::now();
      cache_.OnStreamData(data);
      return writer_->Write(data);  // false: the client left, cancel
    }
    if (buffered_.size() + data.size() > kMaxBufferedBytes) return false;
    buffered_.append(data);
    return true;
  }

  void OnDone(net::ClientResult result) {
    const int64_t now_ms = SteadyNowMs();
    trace_->EndAttempt(result.status.ok() ? result.response.status : 0, result.status);
    if (ClientGone()) {
      backend_->OnAttemptEnd(AttemptOutcome::kNeutral, now_ms);
      if (streaming_) writer_->End();
      return Count(backend_->url(), 499);
    }
    if (streaming_) return EndStream(result.status, now_ms);
    const int status = result.status.ok() ? result.response.status : 0;
    if (result.status.ok() && !IsRetryableStatus(status)) {
      backend_->OnAttemptEnd(AttemptOutcome::kSuccess, now_ms);
      // (A whole answer's first token is its last: its first byte is stamped in Count.)
      if (status == 200 && pass_.limit.reserved_tokens > 0) used_tokens_ = UsedTokens(buffered_);
      cache_.OnWholeAnswer(status, buffered_);
      writer_->Send(status, WithGateHeaders(ClientResponseHeaders(head_.headers, backend_->url(), request_id_)),
                    std::move(buffered_));
      return Count(backend_->url(), status);
    }
    // 429 is the engine protecting itself, not failing: no breaker strike.
    backend_->OnAttemptEnd(status == 429 ? AttemptOutcome::kNeutral : AttemptOutcome::kFailure, now_ms);
    if (status != 429 && ctx_.backends.MaybeEject(*backend_, now_ms)) ctx_.metrics.CountEjection(backend_->url());
    last_status_ = result.status;
    last_response_status_ = status;
    RetryOrFail();
  }

  void EndStream(const Status& status, int64_t now_ms) {
    backend_->OnAttemptEnd(status.ok() ? AttemptOutcome::kSuccess : AttemptOutcome::kFailure, now_ms);
    cache_.OnStreamEnd(status.ok());
    if (!status.ok()) {
      // Bytes already reached the client, so no retry: end the stream the way an OpenAI
      // client understands, instead of cutting it off.
      writer_->Write(net::EncodeSseData(net::ErrorJson(GatewayStatusFor(status), "backend " + backend_->url() +
                                                                                     " failed mid-stream: " +
                                                                                     status.message())));
      writer_->Write(net::EncodeSseData("[DONE]"));
      ctx_.metrics.CountStreamError(backend_->url());
      error_kind_ = status.code() == StatusCode::kDeadlineExceeded ? "timeout" : "backend_error";
      if (ctx_.backends.MaybeEject(*backend_, now_ms)) ctx_.metrics.CountEjection(backend_->url());
    }
    writer_->End();
    Count(backend_->url(), 200);
  }

  void RetryOrFail() {
    if (num_attempts_ <= ctx_.config.retry.max_retries && !ctx_.stopping.load()) {
      ctx_.metrics.CountRetry(pool_);
      const int64_t delay_ms = BackoffMs(ctx_.config.retry, num_attempts_);
      if (delay_ms == 0) return Attempt();
      ctx_.delays.After(delay_ms, [self = shared_from_this()] { self->Attempt(); });
      return;
    }
    FinishAfterFailure();
  }

  // Retries are over (or no other backend is left): the last failure goes to the client.
  void FinishAfterFailure() {
    if (last_response_status_ != 0) {  // the backend's own 5xx / 429, passed on as it is
      writer_->Send(last_response_status_,
                    WithGateHeaders(ClientResponseHeaders(head_.headers, backend_->url(), request_id_)),
                    std::move(buffered_));
      return Count(backend_->url(), last_response_status_);
    }
    const int status = GatewayStatusFor(last_status_);
    FinishWithError(status, "backend " + backend_->url() + " failed: " + last_status_.message());
  }

  void FinishNoBackend() {
    if (backend_ != nullptr) return FinishAfterFailure();  // tried some; none left to try
    if (generates_ && body_problem_ != nullptr) {
      // An engine would answer it with a 400; with none for model "" the body is still the
      // client's mistake, not the fleet's (it names no model to route by).
      return FinishWithError(400, std::string("the request body ") + body_problem_ +
                                      ", so it names no model to route by");
    }
    ctx_.metrics.CountNoBackend(pool_);
    error_kind_ = "no_backend";
    FinishWithError(503, "no routable backend in pool '" + pool_ + "'");
  }

  void FinishWithError(int status, const std::string& message) {
    net::HttpHeaders headers{{"content-type", "application/json"}, {"x-request-id", request_id_}};
    if (backend_ != nullptr) headers.Set("x-surge-backend", backend_->url());
    writer_->Send(status, WithGateHeaders(std::move(headers)), net::ErrorJson(status, message));
    Count(backend_ != nullptr ? backend_->url() : "none", status);
  }

  // Every request ends here exactly once: counted, timed, and its gate state given back.
  // The response (if any) was handed to the writer just before.
  void Count(std::string_view backend, int status) {
    const auto now = std::chrono::steady_clock::now();
    if (!first_byte_ && status != 499) first_byte_ = now;
    ctx_.metrics.CountRequest(backend, pool_, ctx_.backends.PolicyName(pool_), status);
    ctx_.metrics.ObserveRequest(pool_, first_byte_ ? SecondsBetween(arrival_, *first_byte_) : -1,
                                SecondsBetween(arrival_, now));
    const char* kind = error_kind_ != nullptr ? error_kind_ : RouterErrorKind(status);
    if (*kind != '\0') ctx_.metrics.CountError(kind);
    const double ttft_ms = status == 200 && first_byte_ ? 1000 * SecondsBetween(arrival_, *first_byte_) : -1;
    // Tokens: what the usage said; a failure the engine did not run costs none; a stream
    // (no usage parsed) keeps its estimate.
    int64_t tokens = used_tokens_ >= 0 ? used_tokens_ : pass_.limit.reserved_tokens;
    if (status != 200 && !streaming_) tokens = 0;
    TicketId ticket;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ticket = ticket_;
      ticket_ = 0;
    }
    ctx_.gate.Finish(pass_, pool_, ticket, tokens, generates_ ? ttft_ms : -1);
    if (trace_->on()) {
      if (body_.is_object() && body_.contains("model") && body_["model"].is_string()) {
        trace_->Set("gen_ai.request.model", body_["model"].get<std::string>());
      }
      trace_->Set("surge.pool", pool_);
      trace_->Set("surge.policy", ctx_.backends.PolicyName(pool_));
      trace_->Set("surge.priority_tier", TierName(pass_.tier));
      trace_->Set("surge.backend", backend);
      if (ttft_ms >= 0) trace_->Set("gen_ai.latency.time_to_first_token", ttft_ms / 1000.0);
      trace_->End(status);
    }
  }

  static int64_t UsedTokens(const std::string& body) {
    // The engine's answer: depth-bounded before parsing (base/json_access.h).
    StatusOr<json::Json> response = json::Parse(body, "the backend's answer", kMaxFileJsonDepth);
    if (!response.ok()) return -1;
    std::optional<int64_t> total = UsageTotalTokens(*response);
    return total ? *total : -1;
  }

  void OnClientClosed() {
    if (!writer_->disconnected()) return;  // the response was written: nothing to stop
    net::RequestId id;
    bool was_queued = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      client_gone_ = true;
      id = attempt_id_;
      // Still in its tier's queue: take it out (no slot to give back). A false Cancel means
      // the slot was granted meanwhile: OnAdmitted runs, sees the client gone and counts 499.
      if (queued_ && ctx_.gate.Cancel(pool_, ticket_)) {
        was_queued = true;
        ticket_ = 0;
      }
    }
    if (was_queued) return Count("none", 499);
    if (id != net::RequestId{}) ctx_.client.Cancel(id);
  }

  ProxyContext& ctx_;
  net::HttpRequest request_;
  const std::shared_ptr<net::ResponseWriter> writer_;
  Json body_;
  const char* body_problem_ = nullptr;  // why body_ is not the client's JSON object, if it is not
  RouteRequest route_request_;
  std::string client_model_;  // the body's `model` as sent (before an alias dropped it)
  ProxyCache cache_;          // the response cache's decision and tee (router/proxy_cache.h)
  std::string pool_;
  std::string request_id_;
  net::HttpHeaders headers_;  // sent to every backend tried
  std::vector<int32_t> tried_;
  int64_t num_attempts_ = 0;

  // The attempt in flight (see the class comment).
  std::shared_ptr<Backend> backend_;
  bool streaming_ = false;
  net::HttpResponse head_;
  std::string buffered_;
  Status last_status_;
  int last_response_status_ = 0;

  std::optional<RouteTrace> trace_;  // set in Start: the route and backend_attempt spans

  // The gate's decision and what it is told at the end.
  GatePass pass_;
  bool generates_ = false;
  const std::chrono::steady_clock::time_point arrival_ = std::chrono::steady_clock::now();
  // The first body byte handed to the client: a stream's first event, or the whole answer.
  std::optional<std::chrono::steady_clock::time_point> first_byte_;
  const char* error_kind_ = nullptr;  // set: the error kind Count reports (else from the status)
  int64_t used_tokens_ = -1;  // usage of a buffered answer, when a token limit wants it

  std::mutex mu_;
  net::RequestId attempt_id_{};  // guarded by mu_
  bool client_gone_ = false;     // guarded by mu_
  TicketId ticket_ = 0;          // guarded by mu_: the tier admission slot (0: none)
  bool queued_ = false;          // guarded by mu_: waiting in its tier's queue
};

}  // namespace

int GatewayStatusFor(const Status& status) {
  return status.code() == StatusCode::kDeadlineExceeded ? 504 : 502;
}

void ProxyRequest(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
  std::make_shared<ProxyCall>(context, std::move(request), std::move(writer))->Start();
}

}  // namespace surge::router
