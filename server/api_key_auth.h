// --api-key on `surge serve`: which routes want a key, and the check itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "net/http_types.h"
#include "net/response_writer.h"

namespace surge {

// Answer without a key: the probes (/health, /ping) always; /metrics unless
// `key_for_metrics`. Everything else wants one when keys are set.
bool IsOpenRoute(std::string_view path, bool key_for_metrics);

// True when `keys` is empty or the request's `Authorization: Bearer <key>` is one of them
// (compared in time independent of where they differ).
bool HasValidApiKey(const std::vector<std::string>& keys, const net::HttpRequest& request);

// 401 in OpenAI's error shape (code invalid_api_key), with WWW-Authenticate: Bearer.
void ReplyUnauthorized(net::ResponseWriter& writer, const net::HttpRequest& request);

}  // namespace surge
