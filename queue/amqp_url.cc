#include "queue/amqp_url.h"

#include <amqp.h>

#include <vector>

namespace surge::queue {

StatusOr<AmqpUrl> ParseAmqpUrl(std::string_view url) {
  if (url.rfind("amqps://", 0) == 0) return InvalidArgumentError("amqps:// (TLS) is not supported yet; use amqp://");
  if (url.rfind("amqp://", 0) != 0) return InvalidArgumentError("the URL must start with amqp://");
  std::vector<char> buffer(url.begin(), url.end());
  buffer.push_back('\0');
  amqp_connection_info info;
  amqp_default_connection_info(&info);
  if (amqp_parse_url(buffer.data(), &info) != AMQP_STATUS_OK || info.host == nullptr || info.host[0] == '\0') {
    return InvalidArgumentError("not an AMQP URL: " + std::string(url) + " (amqp://user:pass@host:port/vhost)");
  }
  if (info.port < 1 || info.port > 65535) return InvalidArgumentError("the port must be in [1, 65535]");
  // "amqp://host/" parses to the vhost "" (the URI spec), which no broker has: both it and
  // "amqp://host" mean the default vhost "/" (as other clients read them); "%2f" spells it too.
  const std::string vhost = info.vhost[0] == '\0' ? "/" : info.vhost;
  return AmqpUrl{info.host, info.port, info.user, info.password, vhost};
}

}  // namespace surge::queue
