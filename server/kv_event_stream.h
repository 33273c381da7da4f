// GET /kv_events and GET /kv_config: the engine's prefix-cache changes as a Server-Sent
// Events stream, and what a router needs to compute the same block hashes (block size,
// hash function, seed). The stream is fed through EngineClient only; a subscriber that
// falls behind is given a snapshot by the engine (never waited for), and one whose socket
// backlog passes the server's write limit is disconnected (it reconnects and gets a snapshot).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine_client.h"
#include "net/response_writer.h"

namespace surge {

class ServerContext;

// One batch as the stream's JSON (api/kv_events.h, whose decoder the router uses).
std::string KvEventBatchJson(const KvEventBatch& batch);

// GET /kv_config (api::EncodeKvConfig): 404 when the engine has no prefix cache.
void HandleKvConfig(ServerContext& context, net::ResponseWriter& writer);
// GET /kv_events: the stream; 404 when the engine has no prefix cache, 429 past the
// engine's subscriber limit, 503 while shutting down.
void HandleKvEvents(ServerContext& context, std::shared_ptr<net::ResponseWriter> writer);

// The open streams, so that shutdown can end them (they never end by themselves).
class KvEventStreams {
 public:
  class Stream;
  // Subscribes and starts streaming to `writer`; answers an error when the engine refuses.
  void Open(ServerContext& context, std::shared_ptr<net::ResponseWriter> writer);
  // Ends every stream; later Opens are refused with 503.
  void EndAll();

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<Stream>> streams_;  // guarded by mu_
  bool ended_ = false;                          // guarded by mu_
};

}  // namespace surge
