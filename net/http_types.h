// HTTP values shared by server and client (headers, request, response), free of Asio/Beast.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace surge::net {

// ASCII case-insensitive comparison, as HTTP field names and tokens need.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Header fields in arrival order. Lookups ignore case; duplicates are kept (Add) or
// replaced (Set). Small: a linear scan beats a map for the ~10 fields of a request.
class HttpHeaders {
 public:
  using Field = std::pair<std::string, std::string>;

  HttpHeaders() = default;
  HttpHeaders(std::initializer_list<Field> fields) : fields_(fields) {}

  void Add(std::string name, std::string value);
  void Set(std::string name, std::string value);
  void Remove(std::string_view name);
  // The first field with this name, or nullptr.
  const std::string* Find(std::string_view name) const;
  // The first field's value, or `fallback` when absent.
  std::string Get(std::string_view name, std::string_view fallback = {}) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  std::vector<Field>::const_iterator begin() const { return fields_.begin(); }
  std::vector<Field>::const_iterator end() const { return fields_.end(); }
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }

 private:
  std::vector<Field> fields_;
};

// One request as the server hands it to a handler.
struct HttpRequest {
  std::string method;  // "POST"
  std::string target;  // "/v1/completions?x=1", as sent
  std::string path;    // "/v1/completions" (not percent-decoded)
  std::string query;   // "x=1", without '?'
  int version = 11;    // 10 for HTTP/1.0, 11 for HTTP/1.1
  HttpHeaders headers;
  std::string body;
  std::string remote;  // peer address: "127.0.0.1:53412" or "[::1]:53412"
};

// One response as the client returns it.
struct HttpResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;  // empty when the body was streamed to a callback
};

// "OK", "Not Found", ...; "Unknown" for codes without a standard phrase.
std::string_view StatusReason(int status);

// {"error":{"message":...,"type":...,"param":null,"code":"request_too_large"}}: OpenAI's
// error body, for what the HTTP layer refuses itself (404, 405, 413, 431, ...), so that
// clients parse one shape.
std::string ErrorJson(int status, std::string_view message);

// JSON string literal body (no quotes) for `text`: escapes quotes, backslashes, controls.
std::string JsonEscape(std::string_view text);

}  // namespace surge::net
