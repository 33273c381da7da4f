// AmqpConnection: one blocking librabbitmq connection with one channel (librabbitmq is not
// thread-safe: one connection per thread). Every call returns a Status; any error means the
// connection is gone and the owner makes a new one.
#pragma once

#include <amqp.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "queue/amqp_url.h"
#include "queue/queue_message.h"

namespace surge::queue {

struct Received {
  uint64_t delivery_tag = 0;
  bool redelivered = false;
  QueueMessage message{};
};

struct OutgoingMessage {
  std::string routing_key{};  // a queue name (the default exchange)
  std::string correlation_id{};
  std::string body{};
  std::vector<std::pair<std::string, std::string>> headers{};  // string headers
};

class AmqpConnection {
 public:
  static StatusOr<std::unique_ptr<AmqpConnection>> Open(const AmqpUrl& url);
  ~AmqpConnection();
  AmqpConnection(const AmqpConnection&) = delete;
  AmqpConnection& operator=(const AmqpConnection&) = delete;

  // `name` durable, dead-lettering to `dead_name` (also declared, durable).
  Status DeclareQueues(const std::string& name, const std::string& dead_name);
  Status Consume(const std::string& name, int prefetch);
  // nullopt when nothing arrived within `timeout_ms`.
  StatusOr<std::optional<Received>> Next(int timeout_ms);
  Status Publish(const OutgoingMessage& message);  // persistent, application/json
  Status Ack(uint64_t delivery_tag);

 private:
  explicit AmqpConnection(amqp_connection_state_t state) : state_(state) {}
  Status Check(amqp_rpc_reply_t reply, std::string_view what);

  amqp_connection_state_t state_;
};

}  // namespace surge::queue
