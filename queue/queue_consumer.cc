#include "queue/queue_consumer.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "base/logging.h"
#include "obs/metrics.h"
#include "queue/amqp_connection.h"
#include "queue/queue_message.h"

namespace surge::queue {
namespace {

constexpr int64_t kFirstBackoffMs = 100;
constexpr int64_t kMaxBackoffMs = 5'000;
constexpr int kPollMs = 10;  // how long the consumer waits for a delivery before handing answers back

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What the dispatcher thread publishes when an answer cannot be encoded.
constexpr char kUnencodableReply[] =
    R"({"status_code":null,"error":{"code":"internal_error","message":"the answer could not be encoded"}})";

void Count(obs::Counter* counter) {
  if (counter != nullptr) counter->Increment();
}

QueueMetrics RegisterMetrics(obs::Registry* registry) {
  if (registry == nullptr) return {};
  obs::CounterFamily& dead = registry->AddCounterFamily(
      "surge_queue_dead_lettered_total",
      "Queue messages dead-lettered to NAME.dead: invalid (failed validation, published with x-surge-error), "
      "internal (handling it threw: rejected without requeue)",
      {"reason"});
  obs::Counter& reply_errors = registry->AddCounter(
      "surge_queue_reply_errors_total", "Queue answers that could not be encoded (an internal_error reply instead)");
  return {&dead.WithLabels({"invalid"}), &dead.WithLabels({"internal"}), &reply_errors};
}

}  // namespace

QueueConsumer::QueueConsumer(QueueOptions options)
    : options_(std::move(options)),
      metrics_(RegisterMetrics(options_.metrics)),
      dedup_(options_.dedup_ttl_ms, options_.dedup_max_entries) {
  dispatcher_ = std::make_unique<batch::LineDispatcher>(
      batch::DispatchOptions{.base_url = options_.base_url, .max_in_flight = options_.max_in_flight},
      [this](const batch::DispatchedLine& line, const batch::LineAnswer& answer) { OnAnswer(line, answer); });
  backoff_ms_ = kFirstBackoffMs;
  thread_.Start([this] { return Connect(); });
}

// On the dispatcher's thread. ReplyBody reads the answer through json_access and does not
// throw on its bytes; whatever else goes wrong answers the request with an error.
void QueueConsumer::OnAnswer(const batch::DispatchedLine& line, const batch::LineAnswer& answer) {
  std::string reply;
  try {
    reply = ReplyBody(answer.transport.ok() ? answer.status_code : 0, answer.body, answer.transport.message());
  } catch (const std::exception& e) {
    LOG(ERROR) << "queue: the answer to " << line.owner << " could not be encoded: " << e.what();
    Count(metrics_.reply_errors);
    reply = kUnencodableReply;
  }
  std::lock_guard<std::mutex> lock(mu_);
  answers_.push_back({line.owner, std::move(reply)});
}

QueueConsumer::~QueueConsumer() { Stop(); }

void QueueConsumer::Stop() {
  thread_.Stop();
  if (dispatcher_) dispatcher_->Stop();
}

PeriodicThread::Duration QueueConsumer::Connect() {
  StatusOr<std::unique_ptr<AmqpConnection>> connection = AmqpConnection::Open(options_.url);
  Status status = connection.status();
  try {
    if (connection.ok()) status = Serve(**connection);
  } catch (const std::exception& e) {  // outside any one delivery (those are caught in OnDeliveryOrReject)
    status = InternalError(std::string("the consumer threw: ") + e.what());
  }
  if (thread_.stopping()) return PeriodicThread::Duration::zero();  // no run follows a Stop
  if (connection.ok() && status.code() != StatusCode::kInvalidArgument) backoff_ms_ = kFirstBackoffMs;
  LOG(WARNING) << "queue: " << status.message() << "; reconnecting in " << backoff_ms_ << " ms";
  const int64_t wait_ms = backoff_ms_;  // the connection is dropped on return, before the wait
  backoff_ms_ = std::min(kMaxBackoffMs, backoff_ms_ * 2);
  return std::chrono::milliseconds(wait_ms);
}

// One connection's life: declare, consume, and alternate between deliveries and answers.
Status QueueConsumer::Serve(AmqpConnection& connection) {
  ++connection_;
  acks_after_confirm_.clear();  // those deliveries come back on the next connection
  const std::string dead_name = options_.queue_name + ".dead";
  RETURN_IF_ERROR(connection.DeclareQueues(options_.queue_name, dead_name));
  RETURN_IF_ERROR(connection.Consume(options_.queue_name, options_.prefetch));
  LOG(INFO) << "queue: consuming " << options_.queue_name << " on " << options_.url.host << ":" << options_.url.port;
  while (!thread_.stopping()) {
    StatusOr<Event> event = connection.Next(kPollMs);
    if (!event.ok()) return event.status();
    if (event->received) RETURN_IF_ERROR(OnDeliveryOrReject(connection, std::move(*event->received)));
    if (event->confirmed) RETURN_IF_ERROR(OnConfirmed(connection, event->confirmed->sequence, event->confirmed->multiple));
    RETURN_IF_ERROR(DeliverAnswers(connection));
  }
  return OkStatus();
}

Status QueueConsumer::OnDeliveryOrReject(AmqpConnection& connection, Received received) {
  const uint64_t tag = received.delivery_tag;
  const std::string correlation_id = received.message.correlation_id;
  try {
    return OnDelivery(connection, std::move(received));
  } catch (const std::exception& e) {
    LOG(ERROR) << "queue: rejecting message " << correlation_id << " without requeue (the broker dead-letters it to "
               << options_.queue_name << ".dead): " << e.what();
    Count(metrics_.dead_internal);
    return connection.Reject(tag);
  }
}

Status QueueConsumer::OnDelivery(AmqpConnection& connection, Received received) {
  StatusOr<QueueRequest> request = ValidateMessage(received.message, options_.default_endpoint);
  if (!request.ok()) {
    Count(metrics_.dead_invalid);
    LOG(WARNING) << "queue: dead-lettering message " << received.message.correlation_id << ": " << request.status().message();
    ASSIGN_OR_RETURN(const uint64_t sequence, connection.Publish({.routing_key = options_.queue_name + ".dead",
                                                                  .correlation_id = received.message.correlation_id,
                                                                  .body = received.message.body,
                                                                  .headers = {{"x-surge-error", request.status().message()}}}));
    acks_after_confirm_[sequence] = received.delivery_tag;
    return OkStatus();
  }
  const Delivery delivery{received.delivery_tag, connection_};
  if (DedupEntry* seen = dedup_.Find(request->key, NowMs())) {
    if (seen->done) return Reply(connection, *seen, delivery.tag);  // answered before the ack was lost
    if (seen->waiting && seen->waiting->connection == connection_) return connection.Ack(delivery.tag);  // a duplicate
    seen->waiting = delivery;  // a redelivery of a request still running: ack it when done
    return OkStatus();
  }
  dedup_.StartRunning(request->key, {.reply_to = received.message.reply_to,
                                     .correlation_id = received.message.correlation_id,
                                     .waiting = delivery});
  dispatcher_->Enqueue({{request->key, batch::BatchLine{0, request->key, request->url, std::move(request->body)}}});
  return OkStatus();
}

Status QueueConsumer::DeliverAnswers(AmqpConnection& connection) {
  std::deque<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    answers.swap(answers_);
  }
  const int64_t now_ms = NowMs();
  // Every answer is recorded as done before any reply goes out: when a publish fails, the
  // answers after it are kept all the same, and their deliveries, which the broker sends
  // again on the next connection, find their replies here. (Publishing as it went, a
  // failed publish dropped the answers after it, and their redeliveries waited for them
  // for ever: queue_rabbitmq_test's broker restart once left 1 of 2,000 unanswered.)
  std::vector<std::pair<DedupEntry, uint64_t>> replies;  // (entry as done, delivery tag)
  for (Answer& answer : answers) {
    DedupEntry* entry = dedup_.MarkDone(answer.key, std::move(answer.reply), now_ms);
    // A delivery of an older connection cannot be acked: the broker redelivers it, and the
    // reply kept here answers it then.
    if (entry == nullptr || !entry->waiting || entry->waiting->connection != connection_) continue;
    const uint64_t tag = entry->waiting->tag;
    entry->waiting.reset();
    replies.emplace_back(*entry, tag);  // a copy: the window may drop old entries meanwhile
  }
  for (const auto& [entry, tag] : replies) RETURN_IF_ERROR(Reply(connection, entry, tag));
  return OkStatus();
}

// Publish, and ack once the broker confirms the reply: a loss in between means one more
// reply, never a lost one.
Status QueueConsumer::Reply(AmqpConnection& connection, const DedupEntry& entry, uint64_t delivery_tag) {
  ASSIGN_OR_RETURN(const uint64_t sequence, connection.Publish({.routing_key = entry.reply_to,
                                                                .correlation_id = entry.correlation_id,
                                                                .body = entry.reply}));
  acks_after_confirm_[sequence] = delivery_tag;
  return OkStatus();
}

Status QueueConsumer::OnConfirmed(AmqpConnection& connection, uint64_t sequence, bool multiple) {
  auto it = multiple ? acks_after_confirm_.begin() : acks_after_confirm_.find(sequence);
  while (it != acks_after_confirm_.end() && it->first <= sequence) {
    RETURN_IF_ERROR(connection.Ack(it->second));
    it = acks_after_confirm_.erase(it);
    if (!multiple) break;
  }
  return OkStatus();
}

}  // namespace surge::queue
