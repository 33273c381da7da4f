#include "net/http_wire.h"

#include <cstdio>
#include <ctime>

namespace surge::net::internal {
namespace {

bool IsFramingField(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
         EqualsIgnoreCase(name, "Connection");
}

// Appends "name: value\r\n", dropping invalid names and neutralizing line breaks so that a
// value taken from user input can never inject a header or split the response.
void AppendField(std::string* out, std::string_view name, std::string_view value) {
  if (!IsToken(name)) return;
  out->append(name).append(": ");
  for (char c : value) out->push_back((c == '\r' || c == '\n' || c == '\0') ? ' ' : c);
  out->append("\r\n");
}

}  // namespace

bool IsToken(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string FormatResponseHead(int status, const HttpHeaders& headers, BodyFraming framing,
                               size_t content_length, bool keep_alive, const HttpHeaders& extra) {
  std::string out;
  out.reserve(256);
  out.append("HTTP/1.1 ").append(std::to_string(status)).append(" ");
  out.append(StatusReason(status)).append("\r\n");
  bool has_server = false;
  for (const auto& [name, value] : headers) {
    if (IsFramingField(name)) continue;
    has_server = has_server || EqualsIgnoreCase(name, "Server");
    AppendField(&out, name, value);
  }
  for (const auto& [name, value] : extra) {
    if (EqualsIgnoreCase(name, "Vary") || !headers.Has(name)) AppendField(&out, name, value);
  }
  if (!has_server) out.append("Server: surge\r\n");
  out.append("Date: ").append(HttpDate()).append("\r\n");
  // RFC 9110 8.6: no Content-Length on a 204 or 304, which never have a body.
  const bool bodiless = status == 204 || status == 304;
  if (framing == BodyFraming::kContentLength && !bodiless) {
    out.append("Content-Length: ").append(std::to_string(content_length)).append("\r\n");
  } else if (framing == BodyFraming::kChunked) {
    out.append("Transfer-Encoding: chunked\r\n");
  }
  if (!keep_alive) out.append("Connection: close\r\n");
  out.append("\r\n");
  return out;
}

void AppendChunk(std::string* out, std::string_view data) {
  char size[24];
  int length = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  out->append(size, length).append(data).append("\r\n");
}

std::string FormatRequestHead(std::string_view method, const Url& url, const HttpHeaders& headers,
                              size_t body_bytes) {
  std::string out;
  out.reserve(256);
  out.append(method).append(" ").append(url.target).append(" HTTP/1.1\r\n");
  std::string host = url.port == 80 ? url.HostPort().substr(0, url.HostPort().rfind(':')) : url.HostPort();
  if (!headers.Has("Host")) AppendField(&out, "Host", host);
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding")) continue;
    AppendField(&out, name, value);
  }
  bool has_body_semantics = method == "POST" || method == "PUT" || method == "PATCH";
  if (body_bytes > 0 || has_body_semantics) {
    out.append("Content-Length: ").append(std::to_string(body_bytes)).append("\r\n");
  }
  out.append("\r\n");
  return out;
}

std::string HttpDate() {
  // Formatting a date per response costs more than the rest of the head; the text only
  // changes once a second.
  thread_local std::time_t cached_second = 0;
  thread_local std::string cached_text;
  std::time_t now = std::time(nullptr);
  if (now != cached_second) {
    std::tm utc;
    gmtime_r(&now, &utc);
    char buffer[64];
    size_t length = std::strftime(buffer, sizeof(buffer), "%a, %d %b %Y %H:%M:%S GMT", &utc);
    cached_text.assign(buffer, length);
    cached_second = now;
  }
  return cached_text;
}

}  // namespace surge::net::internal
