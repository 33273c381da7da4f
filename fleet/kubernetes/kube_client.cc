#include "fleet/kubernetes/kube_client.h"

#include "autoscale/read_file.h"

namespace surge::k8s {

std::string QueryEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

StatusOr<net::HttpHeaders> KubeClient::Headers() const {
  net::HttpHeaders headers{{"Accept", "application/json"}, {"User-Agent", "surge-autoscale/1"}};
  std::string token = config_.token;
  if (!config_.token_file.empty()) {
    ASSIGN_OR_RETURN(token, autoscale::ReadBoundedFile(config_.token_file, 1 << 20, "token"));
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  }
  if (!token.empty()) headers.Add("Authorization", "Bearer " + token);
  return headers;
}

StatusOr<net::HttpResponse> KubeClient::Call(std::string_view method, std::string_view path_and_query,
                                             std::string body, std::string_view content_type) const {
  ASSIGN_OR_RETURN(net::HttpHeaders headers, Headers());
  if (!content_type.empty()) headers.Add("Content-Type", std::string(content_type));
  net::StreamRequest request{.method = std::string(method),
                             .url = config_.server + std::string(path_and_query),
                             .headers = std::move(headers),
                             .body = std::move(body)};
  return net::StreamFetch(request, config_.tls);
}

StatusOr<net::HttpResponse> KubeClient::Stream(std::string_view path_and_query, const net::StreamCallbacks& callbacks,
                                               const std::atomic<bool>* cancel, int64_t read_timeout_ms) const {
  ASSIGN_OR_RETURN(net::HttpHeaders headers, Headers());
  net::StreamRequest request{.method = "GET",
                             .url = config_.server + std::string(path_and_query),
                             .headers = std::move(headers),
                             .timeout_ms = 0,
                             .read_timeout_ms = read_timeout_ms};
  return net::StreamFetch(request, config_.tls, callbacks, cancel);
}

}  // namespace surge::k8s
