#include "server/in_flight_request.h"

#include "server/server_context.h"

namespace surge {

Status InFlightRequest::SubmitAll(std::vector<EngineRequest> requests, const std::function<void()>& on_submitted) {
  registry_id_ = context_.Register(shared_from_this());
  std::lock_guard<std::mutex> lock(mu_);
  std::weak_ptr<InFlightRequest> weak = weak_from_this();
  for (EngineRequest& request : requests) {
    auto stream = context_.engine.Submit(std::move(request), [weak] {
      if (auto self = weak.lock()) self->Notify();
    });
    if (!stream.ok()) {
      Cancel();
      Unregister();
      return stream.status();
    }
    std::lock_guard<std::mutex> ids_lock(ids_mu_);
    ids_.push_back((*stream)->id());
    streams_.push_back(std::move(stream).value());
  }
  if (on_submitted) on_submitted();
  // The client may leave at any time: free its KV blocks at once rather than at the end.
  writer_->OnClose([weak] {
    auto self = weak.lock();
    if (self && self->writer_->disconnected()) self->Cancel();
  });
  started_ = true;
  return OkStatus();
}

void InFlightRequest::Cancel() {
  std::vector<RequestId> ids;
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    ids = ids_;
  }
  for (RequestId id : ids) context_.engine.Cancel(id);
}

void InFlightRequest::Unregister() { context_.Unregister(registry_id_); }

void InFlightRequest::Notify() {
  if (drain_posted_.exchange(true)) return;  // a drain is already on its way
  context_.runner.Post([self = shared_from_this()] { self->Drain(); });
}

void InFlightRequest::Drain() {
  drain_posted_.store(false);  // before polling: news from now on posts another drain
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || finished_) return;
  OnNews();
}

}  // namespace surge
