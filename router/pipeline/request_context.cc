#include "router/pipeline/request_context.h"

#include "base/json_access.h"
#include "net/sse.h"
#include "router/backend_set.h"
#include "router/complexity.h"
#include "router/forward_headers.h"
#include "router/tiers/tier.h"

namespace surge::router {
namespace {

using Json = nlohmann::json;

double SecondsBetween(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

RequestContext::RequestContext(ProxyContext& context, net::HttpRequest request_in,
                               std::shared_ptr<net::ResponseWriter> writer_in)
    : ctx(context), request(std::move(request_in)), writer(std::move(writer_in)) {}

void RequestContext::Prepare() {
  ParseBody();
  const std::string* id = request.headers.Find("x-request-id");
  request_id = id != nullptr && !id->empty() ? *id : MakeRequestId();
  headers = BackendRequestHeaders(request.headers, ctx.config.forward_authorization,
                                  ctx.config.policy_options.session_header, request_id);
  trace.emplace(ctx.tracer, request.headers, request.method, request.path);
  writer->OnClose([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->OnClientClosed();
  });
}

void RequestContext::ParseBody() {
  const size_t first = request.body.find_first_not_of(" \t\r\n");
  // A body nested deeper than any engine takes is passed on unparsed (the engine answers
  // it with a 400), so no recursive copy or dump here can run out of stack.
  if (first != std::string::npos && request.body[first] == '{' && JsonDepthWithin(request.body)) {
    body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) body = nullptr;  // the engine answers it with a 400
    if (body.is_null()) body_problem = "is not valid JSON";
  } else {
    body_problem = first == std::string::npos || request.body[first] != '{' ? "is not a JSON object"
                                                                           : "is nested too deeply";
  }
  if (body.is_object()) {
    auto it = body.find("model");
    if (it != body.end() && it->is_string()) client_model = it->get<std::string>();
  }
  if (auto alias = ctx.config.aliases.find(client_model); alias != ctx.config.aliases.end()) {
    const ComplexityChoice choice = ChoosePoolByComplexity(alias->second, body);
    model_pool = *choice.pool;
    ctx.metrics.CountAliasRoute(client_model, model_pool, choice.reason);
    body.erase("model");  // the pool's engines answer with their own model's name
    body_changed = true;
  } else {
    model_pool = ctx.backends.PoolForModel(client_model);
  }
  pool = model_pool;  // until pool choice: what a request answered before it is counted under
  SyncBody();
}

void RequestContext::SyncBody() {
  if (body_changed) request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  body_changed = false;
  route_request = {.path = request.path, .body = body.is_object() ? &body : nullptr,
                   .raw_body = request.body, .headers = &request.headers};
}

bool RequestContext::ClientGone() {
  std::lock_guard<std::mutex> lock(mu);
  return client_gone;
}

net::HttpHeaders RequestContext::WithGateHeaders(net::HttpHeaders response_headers) const {
  for (const auto& [name, value] : pass.headers) response_headers.Set(name, value);
  if (const char* cache_header = cache.header()) response_headers.Set("x-surge-cache", cache_header);
  if (trace->on()) response_headers.Set("traceparent", trace->traceparent());
  return response_headers;
}

void RequestContext::Refuse(const GateRefusal& refusal) {
  net::HttpHeaders response_headers = WithGateHeaders(refusal.headers);
  response_headers.Set("x-request-id", request_id);
  writer->Send(refusal.status, std::move(response_headers), refusal.body);
  Finish("none", refusal.status);
}

void RequestContext::FinishWithError(int status, const std::string& message) {
  net::HttpHeaders response_headers{{"content-type", "application/json"}, {"x-request-id", request_id}};
  if (backend != nullptr) response_headers.Set("x-surge-backend", backend->url());
  writer->Send(status, WithGateHeaders(std::move(response_headers)), net::ErrorJson(status, message));
  Finish(backend != nullptr ? backend->url() : "none", status);
}

void RequestContext::FinishAfterFailure() {
  if (last_response_status != 0) {  // the backend's own 5xx / 429, passed on as it is
    writer->Send(last_response_status, WithGateHeaders(ClientResponseHeaders(head.headers, backend->url(), request_id)),
                 std::move(buffered));
    return Finish(backend->url(), last_response_status);
  }
  const int status = GatewayStatusFor(last_status);
  FinishWithError(status, "backend " + backend->url() + " failed: " + last_status.message());
}

void RequestContext::Finish(std::string_view backend_label, int status) {
  const auto now = std::chrono::steady_clock::now();
  if (!first_byte && status != 499) first_byte = now;
  ctx.metrics.CountRequest(backend_label, pool, ctx.backends.PolicyName(pool), status);
  ctx.metrics.ObserveRequest(pool, first_byte ? SecondsBetween(arrival, *first_byte) : -1, SecondsBetween(arrival, now));
  const char* kind = error_kind != nullptr ? error_kind : RouterErrorKind(status);
  if (*kind != '\0') ctx.metrics.CountError(kind);
  const double ttft_ms = status == 200 && first_byte ? 1000 * SecondsBetween(arrival, *first_byte) : -1;
  // Tokens: what the usage said; a failure the engine did not run costs none; a stream
  // (no usage parsed) keeps its estimate.
  int64_t tokens = used_tokens >= 0 ? used_tokens : pass.limit.reserved_tokens;
  if (status != 200 && !streaming) tokens = 0;
  TicketId slot;
  {
    std::lock_guard<std::mutex> lock(mu);
    slot = ticket;
    ticket = kNoTicket;
  }
  ctx.gate.Finish(pass, pool, slot, tokens, generates ? ttft_ms : -1);
  if (!trace->on()) return;
  if (body.is_object() && body.contains("model") && body["model"].is_string()) {
    trace->Set("gen_ai.request.model", body["model"].get<std::string>());
  }
  trace->Set("surge.pool", pool);
  trace->Set("surge.policy", ctx.backends.PolicyName(pool));
  trace->Set("surge.priority_tier", TierName(pass.tier));
  trace->Set("surge.backend", backend_label);
  if (ttft_ms >= 0) trace->Set("gen_ai.latency.time_to_first_token", ttft_ms / 1000.0);
  trace->End(status);
}

void RequestContext::OnClientClosed() {
  if (!writer->disconnected()) return;  // the response was written: nothing to stop
  net::RequestId id;
  bool was_queued = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    client_gone = true;
    id = attempt_id;
    // Still in its tier's queue: take it out (no slot to give back). A false Cancel means
    // the slot was granted meanwhile: the admission continues, sees the client gone and
    // counts 499.
    if (queued && ctx.gate.Cancel(pool, ticket)) {
      was_queued = true;
      ticket = kNoTicket;
    }
  }
  if (was_queued) return Finish("none", 499);
  if (id != net::RequestId{}) ctx.client.Cancel(id);
}

}  // namespace surge::router
