#include <algorithm>
#include <charconv>

#include "batch/batch_api.h"
#include "net/url.h"

namespace surge::batch {

void ReplyError(net::ResponseWriter& writer, const api::ApiError& error) {
  api::ErrorReply reply = api::MakeErrorReply(error);
  writer.SendJson(reply.http_status, std::move(reply.body));
}

void ReplyStatus(net::ResponseWriter& writer, const Status& status) { ReplyError(writer, {status, "", ""}); }

api::ApiResult<std::map<std::string, std::string>> ParseQuery(std::string_view query,
                                                              std::initializer_list<std::string_view> known) {
  std::map<std::string, std::string> values;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    std::string name = net::PercentDecode(pair.substr(0, equals));
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return api::InvalidParam(name, "unknown query parameter '" + name.substr(0, 64) + "'");
    }
    values[std::move(name)] = equals == std::string_view::npos ? "" : net::PercentDecode(pair.substr(equals + 1));
  }
  return values;
}

api::ApiResult<int64_t> ParseLimit(const std::map<std::string, std::string>& query, int64_t fallback, int64_t max) {
  auto it = query.find("limit");
  if (it == query.end()) return fallback;
  int64_t limit = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
  if (ec != std::errc() || end != text.data() + text.size() || limit < 1 || limit > max) {
    return api::InvalidParam("limit", "limit must be an integer in [1, " + std::to_string(max) + "]");
  }
  return limit;
}

Json ListJson(const std::vector<Json>& data, bool has_more) {
  return {{"object", "list"},
          {"data", data},
          {"first_id", data.empty() ? Json() : data.front()["id"]},
          {"last_id", data.empty() ? Json() : data.back()["id"]},
          {"has_more", has_more}};
}

}  // namespace surge::batch
