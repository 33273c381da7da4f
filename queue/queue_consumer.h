// QueueConsumer: `surge route --queue`. Consumes OpenAI request bodies from a durable
// RabbitMQ queue (RPC pattern: reply_to + correlation_id), runs each at batch tier through a
// LineDispatcher, publishes the answer to reply_to with the same correlation_id, and acks
// the request only once the broker confirmed the reply (at-least-once). Redeliveries are recognised in a DedupWindow and
// never run twice; poison messages go to NAME.dead with the error in `x-surge-error`, and a
// message whose handling throws is rejected without requeue (the broker dead-letters it there).
// One thread owns the connection (librabbitmq blocks) and reconnects with a back-off
// (100 ms doubling to 5 s) when the broker goes away.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/periodic_thread.h"
#include "batch/line_dispatcher.h"
#include "queue/amqp_url.h"
#include "queue/dedup_window.h"

namespace surge::obs {
class Counter;
class Registry;
}  // namespace surge::obs

namespace surge::queue {

class AmqpConnection;
struct Received;

// What the consumer counts (docs/METRICS.md); null members count nothing.
struct QueueMetrics {
  obs::Counter* dead_invalid = nullptr;   // failed validation: published to NAME.dead with its error
  obs::Counter* dead_internal = nullptr;  // handling it threw: rejected without requeue (the broker dead-letters it)
  obs::Counter* reply_errors = nullptr;   // an answer that could not be encoded: an internal_error reply instead
};

struct QueueOptions {
  AmqpUrl url;
  std::string queue_name = "surge.requests";
  std::string default_endpoint = "/v1/chat/completions";
  int prefetch = 64;          // unacked deliveries at once: at most the dispatcher's max in flight
  int max_in_flight = 64;     // the dispatcher's window bound
  std::string base_url;       // where requests go (the router itself)
  int64_t dedup_ttl_ms = 600'000;
  size_t dedup_max_entries = 100'000;
  obs::Registry* metrics = nullptr;  // surge_queue_dead_lettered_total, surge_queue_reply_errors_total; null: none
};

class QueueConsumer {
 public:
  explicit QueueConsumer(QueueOptions options);
  ~QueueConsumer();  // Stop()
  QueueConsumer(const QueueConsumer&) = delete;
  QueueConsumer& operator=(const QueueConsumer&) = delete;
  void Stop();  // unacked requests go back to the queue with the connection

 private:
  struct Answer {
    std::string key;
    std::string reply;
  };
  // One connection's life, then the back-off before the next (doubling to kMaxBackoffMs).
  PeriodicThread::Duration Connect();
  Status Serve(AmqpConnection& connection);
  // OnDelivery; a delivery whose handling throws is rejected without requeue, so that it is
  // dead-lettered once instead of redelivered for ever.
  Status OnDeliveryOrReject(AmqpConnection& connection, Received received);
  Status OnDelivery(AmqpConnection& connection, Received received);
  void OnAnswer(const batch::DispatchedLine& line, const batch::LineAnswer& answer);
  Status DeliverAnswers(AmqpConnection& connection);
  Status Reply(AmqpConnection& connection, const DedupEntry& entry, uint64_t delivery_tag);
  Status OnConfirmed(AmqpConnection& connection, uint64_t sequence, bool multiple);

  const QueueOptions options_;
  const QueueMetrics metrics_;
  DedupWindow dedup_;            // consumer thread only
  uint64_t connection_ = 0;      // generation of the current connection; consumer thread only
  std::map<uint64_t, uint64_t> acks_after_confirm_;  // publish sequence -> delivery to ack; consumer thread
  std::mutex mu_;
  std::deque<Answer> answers_;   // guarded by mu_: from the dispatcher's thread
  int64_t backoff_ms_ = 0;      // consumer thread only
  std::unique_ptr<batch::LineDispatcher> dispatcher_;
  PeriodicThread thread_;
};

}  // namespace surge::queue
