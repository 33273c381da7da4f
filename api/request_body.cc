#include "api/request_body.h"

#include <string>

#include "base/json_depth.h"
#include "base/utf8.h"

namespace surge::api {

ApiResult<Json> ParseJsonBounded(std::string_view text, int max_depth, std::string_view what,
                                 std::string_view param) {
  if (JsonNestingDepth(text, max_depth) > max_depth) {
    return InvalidParam(std::string(param), std::string(what) + " nests arrays and objects deeper than the limit of " +
                                                std::to_string(max_depth) + " levels");
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // e.what() names the line and column: "[json.exception.parse_error.101] parse error at ...".
    return InvalidParam(std::string(param), std::string(what) + " is not valid JSON: " + e.what());
  }
}

ApiResult<Json> ParseRequestObject(std::string_view body, const RequestLimits& limits) {
  if (!IsValidUtf8(body)) return InvalidParam("", "the request body is not valid UTF-8");
  ApiResult<Json> object = ParseJsonBounded(body, limits.max_json_depth, "the request body", "");
  if (!object.ok()) return object;
  if (!object->is_object()) {
    return InvalidParam("", "the request body must be a JSON object, got " + JsonTypeName(*object));
  }
  return object;
}

}  // namespace surge::api
