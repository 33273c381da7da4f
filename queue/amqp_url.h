// AmqpUrl: the broker address `surge route --queue` takes, amqp://user:pass@host:port/vhost
// (librabbitmq's own parser: percent-decoding, defaults guest:guest@localhost:5672; an empty
// vhost, "amqp://host/", is the default vhost "/").
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace surge::queue {

struct AmqpUrl {
  std::string host;
  int port = 5672;
  std::string user;
  std::string password;
  std::string vhost;
};

// amqps:// is refused (no TLS socket wired yet), as is anything librabbitmq cannot parse.
StatusOr<AmqpUrl> ParseAmqpUrl(std::string_view url);

}  // namespace surge::queue
