#include "apps/queue_flags.h"

#include "batch/batch_input.h"
#include "queue/amqp_url.h"

namespace surge {

void RegisterQueueFlags(FlagParser& parser, QueueFlags& f) {
  parser.AddString("queue", &f.url,
                   "amqp://user:pass@host:port/vhost: consume OpenAI requests from RabbitMQ (reply_to + correlation_id), "
                   "run them at batch tier and publish each answer to reply_to (queue/README.md)");
  parser.AddString("queue-name", &f.name, "the durable queue to consume; poison messages go to NAME.dead (default surge.requests)");
  parser.AddString("queue-endpoint", &f.endpoint,
                   "the endpoint of a message without an x-surge-endpoint header: /v1/chat/completions (default), "
                   "/v1/completions or /v1/embeddings");
  parser.AddInt("queue-prefetch", &f.prefetch, "most unacked messages at once, at most --batch-max-in-flight (its default)");
}

StatusOr<std::optional<queue::QueueOptions>> ToQueueOptions(const QueueFlags& f, int64_t max_in_flight,
                                                            const FlagParser& parser) {
  if (f.url.empty()) {
    for (const char* flag : {"queue-name", "queue-endpoint", "queue-prefetch"}) {
      if (parser.seen(flag)) return InvalidArgumentError(std::string("--") + flag + " needs --queue");
    }
    return std::optional<queue::QueueOptions>();
  }
  StatusOr<queue::AmqpUrl> url = queue::ParseAmqpUrl(f.url);
  if (!url.ok()) return InvalidArgumentError("--queue: " + url.status().message());
  if (f.name.empty() || f.name.size() > 200) return InvalidArgumentError("--queue-name must be 1 to 200 characters");
  if (!batch::IsBatchEndpoint(f.endpoint)) {
    return InvalidArgumentError("--queue-endpoint must be /v1/chat/completions, /v1/completions or /v1/embeddings");
  }
  if (max_in_flight < 1 || max_in_flight > 4096) return InvalidArgumentError("--batch-max-in-flight must be in [1, 4096]");
  const int64_t prefetch = f.prefetch == 0 ? max_in_flight : f.prefetch;
  if (prefetch < 1 || prefetch > max_in_flight) {
    return InvalidArgumentError("--queue-prefetch must be in [1, --batch-max-in-flight (" + std::to_string(max_in_flight) + ")]");
  }
  queue::QueueOptions options;
  options.url = *std::move(url);
  options.queue_name = f.name;
  options.default_endpoint = f.endpoint;
  options.prefetch = static_cast<int>(prefetch);
  options.max_in_flight = static_cast<int>(max_in_flight);
  return std::optional<queue::QueueOptions>(std::move(options));
}

}  // namespace surge
