#include "net/url.h"

#include <charconv>

#include "net/http_types.h"

namespace surge::net {
namespace {

bool IsHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_';
}

// Splits "host[:port]" (authority without userinfo) into url->host and url->port.
Status ParseAuthority(std::string_view authority, Url* url) {
  std::string_view port_text;
  if (authority.starts_with('[')) {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgumentError("unclosed '[' in host");
    url->host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return InvalidArgumentError("junk after ']'");
    if (!rest.empty()) port_text = rest.substr(1);
    for (char c : url->host) {
      if (!(IsHostChar(c) || c == ':' || c == '%')) return InvalidArgumentError("bad IPv6 literal");
    }
  } else {
    size_t colon = authority.find(':');
    url->host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    for (char c : url->host) {
      if (!IsHostChar(c)) return InvalidArgumentError("bad character in host");
    }
  }
  if (url->host.empty()) return InvalidArgumentError("empty host");
  if (port_text.empty()) return OkStatus();
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    return InvalidArgumentError("bad port '" + std::string(port_text) + "'");
  }
  url->port = static_cast<uint16_t>(port);
  return OkStatus();
}

}  // namespace

std::string Url::HostPort() const {
  std::string text = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return text + ":" + std::to_string(port);
}

StatusOr<Url> ParseUrl(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return InvalidArgumentError("URL '" + std::string(url) + "' has no scheme");
  }
  std::string_view scheme = url.substr(0, scheme_end);
  if (EqualsIgnoreCase(scheme, "https")) return UnimplementedError("https is not supported");
  if (!EqualsIgnoreCase(scheme, "http")) {
    return InvalidArgumentError("URL scheme '" + std::string(scheme) + "' is not http");
  }
  std::string_view rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('#'));
  size_t target_start = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, target_start);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgumentError("credentials in URLs are not supported");
  }
  Url parsed;
  Status status = ParseAuthority(authority, &parsed);
  if (!status.ok()) return status.WithContext("URL '" + std::string(url) + "'");
  parsed.target = target_start == std::string_view::npos ? "/" : std::string(rest.substr(target_start));
  if (parsed.target.starts_with('?')) parsed.target.insert(0, "/");
  for (char c : parsed.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return InvalidArgumentError("URL '" + std::string(url) + "' has a space or control character");
    }
  }
  return parsed;
}

std::string PercentDecode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = hex(text[i + 1]), low = hex(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace surge::net
