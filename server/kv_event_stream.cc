#include "server/kv_event_stream.h"

#include <atomic>

#include "api/kv_events.h"
#include "net/sse.h"
#include "server/server_context.h"

namespace surge {

namespace {

api::KvEventRun::Type WireType(KvEvent::Type type) {
  switch (type) {
    case KvEvent::Type::kStored: return api::KvEventRun::Type::kStored;
    case KvEvent::Type::kEvicted: return api::KvEventRun::Type::kEvicted;
    case KvEvent::Type::kCleared: return api::KvEventRun::Type::kCleared;
  }
  return api::KvEventRun::Type::kStored;
}

}  // namespace

std::string KvEventBatchJson(const KvEventBatch& batch) {
  api::KvEventBatch wire{.seq = batch.seq, .snapshot = batch.snapshot, .events = {}};
  wire.events.reserve(batch.events.size());
  for (const KvEvent& event : batch.events) wire.events.push_back({WireType(event.type), event.block_hashes});
  return api::EncodeKvEventBatch(wire);
}

// Drains the subscription on a worker (never on the engine thread, whose notify only
// posts), one drain at a time so that batches go out in order.
class KvEventStreams::Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(ServerContext& context, std::shared_ptr<net::ResponseWriter> writer)
      : context_(context), writer_(std::move(writer)) {}

  Status Subscribe() {
    std::weak_ptr<Stream> weak = weak_from_this();
    auto subscription = context_.engine.SubscribeKvEvents([weak] {
      if (auto stream = weak.lock()) stream->Schedule();
    });
    if (!subscription.ok()) return subscription.status();
    std::lock_guard lock(mu_);
    subscription_ = std::move(subscription).value();
    return OkStatus();
  }

  void Schedule() {
    if (scheduled_.exchange(true)) return;
    auto self = shared_from_this();
    if (!context_.runner.Post([self] { self->Drain(); })) End();
  }

  void Drain() {
    std::lock_guard lock(mu_);
    scheduled_ = false;
    if (!subscription_) return;
    for (const KvEventBatch& batch : subscription_->Poll()) {
      if (!writer_->Write(net::EncodeSseData(KvEventBatchJson(batch)))) {
        subscription_.reset();  // the client left or fell too far behind
        return;
      }
    }
  }

  // Also when the client disconnected: the subscription (an engine slot) goes at once.
  void End() {
    std::lock_guard lock(mu_);
    subscription_.reset();
    if (ended_) return;
    ended_ = true;
    writer_->End();
  }

 private:
  ServerContext& context_;
  std::shared_ptr<net::ResponseWriter> writer_;
  std::atomic<bool> scheduled_{false};
  std::mutex mu_;
  std::unique_ptr<KvEventSubscription> subscription_;  // guarded by mu_; null once ended
  bool ended_ = false;                                 // guarded by mu_
};

void KvEventStreams::Open(ServerContext& context, std::shared_ptr<net::ResponseWriter> writer) {
  auto stream = std::make_shared<Stream>(context, writer);
  {
    std::lock_guard lock(mu_);
    if (ended_) return context.ReplyError(*writer, "/kv_events", {UnavailableError("the server is shutting down"), "", ""});
    std::erase_if(streams_, [](const std::weak_ptr<Stream>& open) { return open.expired(); });
    streams_.push_back(stream);
  }
  if (Status status = stream->Subscribe(); !status.ok()) {
    return context.ReplyError(*writer, "/kv_events", {status, "", ""});
  }
  context.metrics.CountRequest("/kv_events", 200);
  writer->StartStream(200, net::SseHeaders());
  stream->Schedule();  // the first Poll: the snapshot
  // The close callback holds the stream while it streams; it runs once, when the client
  // leaves or the stream was ended, and lets it go.
  writer->OnClose([stream] { stream->End(); });
}

void HandleKvConfig(ServerContext& context, net::ResponseWriter& writer) {
  const KvCacheInfo info = context.engine.KvCache();
  if (!info.prefix_caching) {
    return context.ReplyError(writer, "/kv_config", {NotFoundError("prefix caching is off on this server"), "", ""});
  }
  context.Reply(writer, "/kv_config", 200,
                api::EncodeKvConfig({.block_size = info.block_size,
                                     .hash_seed = info.hash_seed,
                                     .num_total_blocks = info.num_total_blocks}));
}

void HandleKvEvents(ServerContext& context, std::shared_ptr<net::ResponseWriter> writer) {
  if (context.draining) {
    return context.ReplyError(*writer, "/kv_events", {UnavailableError("the server is shutting down"), "", ""});
  }
  if (!context.engine.KvCache().prefix_caching) {
    return context.ReplyError(*writer, "/kv_events", {NotFoundError("prefix caching is off on this server"), "", ""});
  }
  context.kv_event_streams.Open(context, std::move(writer));
}

void KvEventStreams::EndAll() {
  std::vector<std::shared_ptr<Stream>> open;
  {
    std::lock_guard lock(mu_);
    ended_ = true;
    for (const auto& weak : streams_) {
      if (auto stream = weak.lock()) open.push_back(std::move(stream));
    }
    streams_.clear();
  }
  for (const auto& stream : open) stream->End();
}

}  // namespace surge
