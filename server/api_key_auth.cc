#include "server/api_key_auth.h"

#include "api/bearer_token.h"
#include "api/error.h"
#include "base/crypto.h"

namespace surge {

bool IsOpenRoute(std::string_view path, bool key_for_metrics) {
  return path == "/health" || path == "/ping" || (path == "/metrics" && !key_for_metrics);
}

bool HasValidApiKey(const std::vector<std::string>& keys, const net::HttpRequest& request) {
  if (keys.empty()) return true;
  const std::string* header = request.headers.Find("Authorization");
  if (header == nullptr) return false;
  const std::string_view token = api::BearerToken(*header);
  bool found = false;
  for (const std::string& key : keys) found |= !token.empty() && ConstantTimeEquals(token, key);
  return found;
}

void ReplyUnauthorized(net::ResponseWriter& writer, const net::HttpRequest& request) {
  const std::string message = request.headers.Has("Authorization")
                                  ? "Incorrect API key provided: send one of the server's keys as 'Authorization: Bearer <key>'"
                                  : "Missing API key: send it as 'Authorization: Bearer <key>'";
  writer.Send(401, {{"Content-Type", "application/json"}, {"WWW-Authenticate", "Bearer"}},
              api::ErrorBody(401, message, "", "invalid_api_key"));
}

}  // namespace surge
