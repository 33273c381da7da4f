// `surge route --queue amqp://...` and its flags: the RabbitMQ consumer (queue/README.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/flags.h"
#include "base/status.h"
#include "queue/queue_consumer.h"

namespace surge {

struct QueueFlags {
  std::string url;
  std::string name = "surge.requests";
  std::string endpoint = "/v1/chat/completions";
  int64_t prefetch = 0;  // 0: --batch-max-in-flight
};

void RegisterQueueFlags(FlagParser& parser, QueueFlags& flags);

// nullopt without --queue (the other queue flags then need it); errors name the flag.
// `max_in_flight` is the batch window's bound (--batch-max-in-flight), which bounds the prefetch.
StatusOr<std::optional<queue::QueueOptions>> ToQueueOptions(const QueueFlags& flags, int64_t max_in_flight,
                                                            const FlagParser& parser);

}  // namespace surge
