#include "obs/otlp_http/otlp_http_sender.h"

#include <memory>
#include <utility>

#include "net/http_client.h"
#include "net/url.h"

namespace surge::obs {

StatusOr<OtlpSendFunction> MakeOtlpHttpSender(const std::string& endpoint, int64_t timeout_ms) {
  ASSIGN_OR_RETURN(net::Url url, net::ParseUrl(endpoint));
  std::string target = endpoint;
  if (url.target == "/" && endpoint.back() != '/') target += "/v1/traces";
  // One client: its io thread and kept-alive connection serve every batch.
  net::HttpClientOptions options;
  options.connect_timeout_ms = timeout_ms;
  auto client = std::make_shared<net::HttpClient>(options);
  return OtlpSendFunction([client, target, timeout_ms](std::string_view content_type,
                                                      const std::string& body) -> StatusOr<int> {
    net::ClientRequest request;
    request.method = "POST";
    request.url = target;
    request.headers.Set("Content-Type", std::string(content_type));
    request.body = body;
    request.timeout_ms = timeout_ms;
    request.read_timeout_ms = timeout_ms;
    ASSIGN_OR_RETURN(net::HttpResponse response, client->Fetch(std::move(request)));
    return response.status;
  });
}

}  // namespace surge::obs
