// RequestContext: one client request as it passes the gateway's stages (pipeline.h) --
// what they share (the parsed body, the gate's pass, the cache's plan, the pool, the
// attempt in flight, the spans) and the ways a request ends (refused, failed, answered),
// each counted exactly once.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_types.h"
#include "net/response_writer.h"
#include "router/policy.h"
#include "router/proxy.h"
#include "router/proxy_cache.h"
#include "router/request_gate.h"
#include "router/route_trace.h"

namespace surge::router {

// Threads: a stage runs on whichever thread continues the request (the server's io thread,
// a Redis worker, the DelayQueue's, the client's io thread); one stage at a time. The
// attempt state is written by the policy stage before each send and then touched only by
// that attempt's callbacks. `mu` guards what the client-disconnect callback (the server's
// io thread) shares with the stages.
struct RequestContext : std::enable_shared_from_this<RequestContext> {
  RequestContext(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer);

  // Parses the body once, picks the model's pool, sets the request id, the backend headers
  // and the route span, and watches for the client leaving.
  void Prepare();

  // The ways a request ends. Each writes the answer and then Finish()es.
  void Refuse(const GateRefusal& refusal);
  void FinishWithError(int status, const std::string& message);
  // Retries are over (or no other backend is left): the last failure goes to the client.
  void FinishAfterFailure();
  // Every request ends here exactly once: counted, timed, and its gate state given back.
  // The response (if any) was handed to the writer just before.
  void Finish(std::string_view backend, int status);

  // Adds the gate's headers (x-ratelimit-*), x-surge-cache and the route span's traceparent.
  net::HttpHeaders WithGateHeaders(net::HttpHeaders headers) const;
  // The body as forwarded: re-encoded once after a stage changed `body`.
  void SyncBody();
  bool ClientGone();

  ProxyContext& ctx;
  net::HttpRequest request;
  const std::shared_ptr<net::ResponseWriter> writer;

  // Shared by the stages.
  nlohmann::json body;          // null when the body is not a JSON object
  const char* body_problem = nullptr;  // why `body` is not the client's JSON object, if it is not
  bool body_changed = false;    // `body` differs from request.body (SyncBody)
  RouteRequest route_request;   // what the policy sees
  std::string client_model;     // the body's `model` as sent (before an alias dropped it)
  std::string model_pool;       // the pool its `model` names (or its alias chose)
  std::string pool;             // the pool it goes to (pool choice: the tier's, or the model's)
  std::string request_id;
  net::HttpHeaders headers;     // sent to every backend tried
  std::optional<RouteTrace> trace;  // the route and backend_attempt spans
  GatePass pass;                // the gate's decision, handed back at the end
  bool generates = false;       // a token-generating path (charged max_tokens, timed for TTFT)
  ProxyCache cache;             // the response cache's decision and tee (router/proxy_cache.h)

  // Attempts: the backends tried, and the one in flight (see the struct comment).
  std::vector<int32_t> tried;
  int64_t num_attempts = 0;
  std::shared_ptr<Backend> backend;
  bool streaming = false;
  net::HttpResponse head;
  std::string buffered;
  Status last_status;
  int last_response_status = 0;

  const std::chrono::steady_clock::time_point arrival = std::chrono::steady_clock::now();
  // The first body byte handed to the client: a stream's first event, or the whole answer.
  std::optional<std::chrono::steady_clock::time_point> first_byte;
  const char* error_kind = nullptr;  // set: the error kind Finish reports (else from the status)
  int64_t used_tokens = -1;          // usage of a buffered answer, when a token limit wants it

  std::mutex mu;
  net::RequestId attempt_id{};  // guarded by mu
  bool client_gone = false;     // guarded by mu
  TicketId ticket = kNoTicket;  // guarded by mu: the tier admission slot (kNoTicket: none)
  bool queued = false;          // guarded by mu: waiting in its tier's queue

 private:
  void ParseBody();
  void OnClientClosed();
};

}  // namespace surge::router
