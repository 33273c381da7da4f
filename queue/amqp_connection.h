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

// The broker's publisher confirm: every publish up to `sequence` (just it when !multiple) is
// safely with the broker.
struct Confirmed {
  uint64_t sequence = 0;
  bool multiple = false;
};

struct Event {
  std::optional<Received> received{};
  std::optional<Confirmed> confirmed{};
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
  // A delivery, a confirm, or neither when nothing arrived within `timeout_ms`. A nack (the
  // broker lost a publish) is an error: the connection is dropped and the requests redelivered.
  StatusOr<Event> Next(int timeout_ms);
  // Persistent, application/json, on the confirm-mode channel: its sequence number (1, 2, ...).
  StatusOr<uint64_t> Publish(const OutgoingMessage& message);
  Status Ack(uint64_t delivery_tag);
  // basic.reject without requeue: the broker drops the delivery, or dead-letters it when its
  // queue has an x-dead-letter-exchange (DeclareQueues gives ours one: NAME.dead).
  Status Reject(uint64_t delivery_tag);

 private:
  explicit AmqpConnection(amqp_connection_state_t state) : state_(state) {}
  Status Check(amqp_rpc_reply_t reply, std::string_view what);

  amqp_connection_state_t state_;
  uint64_t num_published_ = 0;
};

}  // namespace surge::queue
