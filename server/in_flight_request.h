// InFlightRequest: what every route that hands work to the engine shares (generations,
// embeddings) -- its engine requests submitted with one stream each, cancelled at once
// when the client leaves or the server shuts down, and their news drained on the worker
// threads. Threads: the engine thread only notifies (a drain is posted to the workers),
// the io thread only cancels; the drain itself runs under mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/engine_client.h"
#include "net/response_writer.h"
#include "server/request_trace.h"

namespace surge {

class ServerContext;

class InFlightRequest : public std::enable_shared_from_this<InFlightRequest> {
 public:
  // Made while its handler runs: it holds that request's trace (CurrentRequestTrace), so
  // the server span ends when the request does.
  InFlightRequest(ServerContext& context, std::shared_ptr<net::ResponseWriter> writer)
      : context_(context), writer_(std::move(writer)), trace_(CurrentRequestTrace()) {}
  virtual ~InFlightRequest() = default;

  // Stops its engine requests; each then ends, and the request answers and unregisters.
  void Cancel();

 protected:
  // Registers with the context and submits one engine request after the other (stream
  // i is request i's). A refusal cancels those already submitted and comes back with
  // nothing sent. `on_submitted` runs under mu_ before the first drain (set up state,
  // start a stream).
  Status SubmitAll(std::vector<EngineRequest> requests, const std::function<void()>& on_submitted);
  // Under mu_ on a worker thread: an engine stream may have news. Not called after
  // finished_ is set.
  virtual void OnNews() = 0;
  void Unregister();

  ServerContext& context_;
  const std::shared_ptr<net::ResponseWriter> writer_;
  const std::shared_ptr<RequestTrace> trace_;  // null: not traced
  std::mutex mu_;                                        // serializes SubmitAll and OnNews
  std::vector<std::shared_ptr<RequestStream>> streams_;  // guarded by mu_; [num engine requests]
  bool finished_ = false;                                // guarded by mu_

 private:
  void Notify();
  void Drain();

  uint64_t registry_id_ = 0;
  std::atomic<bool> drain_posted_{false};
  bool started_ = false;        // guarded by mu_
  std::mutex ids_mu_;           // held only to copy ids: Cancel runs on the io thread
  std::vector<RequestId> ids_;  // guarded by ids_mu_
};

}  // namespace surge
