#include "net/cors.h"

#include <cctype>
#include <string>

#include "net/http_wire.h"

namespace surge::net {
namespace {

// Request fields the OpenAI SDKs (and surge's own X-Priority) send, for a preflight that
// does not list what it wants. Browsers list them, and we echo that list instead: the
// fixed one only matters to a hand-written OPTIONS.
constexpr char kDefaultAllowHeaders[] =
    "Authorization, Content-Type, OpenAI-Organization, OpenAI-Project, OpenAI-Beta, X-Priority, "
    "X-Stainless-Arch, X-Stainless-Lang, X-Stainless-OS, X-Stainless-Package-Version, "
    "X-Stainless-Retry-Count, X-Stainless-Runtime, X-Stainless-Runtime-Version, X-Stainless-Timeout";
// Response fields a client reads beyond the CORS-safelisted ones (Content-Type, ...):
// Retry-After on a 429 says when to come back.
constexpr char kExposeHeaders[] = "Retry-After";
// An echoed Access-Control-Request-Headers longer than this falls back to the fixed list.
constexpr size_t kMaxEchoedHeadersBytes = 2048;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsHostChar(char c, bool bracketed) {
  if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') return true;
  return bracketed && c == ':';  // an IPv6 literal
}

// "8080" -> 8080; 0 when not a port.
int ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5) return 0;
  int port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    port = port * 10 + (c - '0');
  }
  return port <= 65535 ? port : 0;
}

// Splits "host[:port]" (host possibly "[v6]") and checks both; returns the host, lowercased.
StatusOr<std::string> ParseAuthority(std::string_view authority, std::string_view entry, int* port) {
  const bool bracketed = authority.starts_with('[');
  const size_t host_end = bracketed ? authority.find(']') : authority.rfind(':');
  std::string_view host = authority.substr(0, bracketed && host_end != std::string_view::npos ? host_end + 1 : host_end);
  std::string_view rest = authority.substr(host.size());
  if (bracketed && (host_end == std::string_view::npos || host.size() <= 2)) {
    return InvalidArgumentError("bad IPv6 host in origin '" + std::string(entry) + "'");
  }
  std::string_view bare = bracketed ? host.substr(1, host.size() - 2) : host;
  if (bare.empty()) return InvalidArgumentError("origin '" + std::string(entry) + "' has no host");
  for (char c : bare) {
    if (!IsHostChar(c, bracketed)) {
      return InvalidArgumentError("origin '" + std::string(entry) + "' has an invalid host (no wildcards: list each origin)");
    }
  }
  *port = 0;
  if (!rest.empty()) {
    *port = rest.starts_with(':') ? ParsePort(rest.substr(1)) : 0;
    if (*port == 0) return InvalidArgumentError("origin '" + std::string(entry) + "' has an invalid port");
  }
  return Lower(host);
}

// One entry of the list, serialized as a browser sends it in Origin.
StatusOr<std::string> ParseOrigin(std::string_view entry) {
  if (entry == "null") {
    return InvalidArgumentError("the 'null' origin (sandboxed frames, file: pages) cannot be allowed safely");
  }
  const size_t separator = entry.find("://");
  if (separator == std::string_view::npos) {
    return InvalidArgumentError("'" + std::string(entry) + "' is not an origin (scheme://host[:port])");
  }
  const std::string scheme = Lower(entry.substr(0, separator));
  if (scheme != "http" && scheme != "https") {
    return InvalidArgumentError("origin '" + std::string(entry) + "' must start with http:// or https://");
  }
  std::string_view authority = entry.substr(separator + 3);
  if (authority.find_first_of("/?#@") != std::string_view::npos) {
    return InvalidArgumentError("origin '" + std::string(entry) +
                                "' has a path, query or userinfo; an origin is scheme://host[:port], no trailing '/'");
  }
  int port = 0;
  ASSIGN_OR_RETURN(std::string host, ParseAuthority(authority, entry, &port));
  const bool default_port = (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  std::string origin = scheme + "://" + host;
  if (port != 0 && !default_port) origin += ":" + std::to_string(port);
  return origin;
}

// A comma-separated list of field names, as Access-Control-Request-Headers carries.
bool IsFieldNameList(std::string_view list) {
  if (list.size() > kMaxEchoedHeadersBytes) return false;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (!internal::IsToken(Trim(list.substr(0, comma)))) return false;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return true;
}

}  // namespace

StatusOr<CorsOptions> ParseAllowedOrigins(std::string_view list) {
  CorsOptions options;
  if (Trim(list).empty()) return InvalidArgumentError("empty list: give '*' or scheme://host[:port],...");
  if (Trim(list) == "*") {
    options.any_origin = true;
    return options;
  }
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view entry = Trim(list.substr(0, comma));
    if (entry.empty()) return InvalidArgumentError("empty entry in the origin list");
    if (entry == "*") return InvalidArgumentError("'*' must stand alone, not in a list of origins");
    ASSIGN_OR_RETURN(std::string origin, ParseOrigin(entry));
    options.origins.push_back(std::move(origin));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return options;
}

bool IsOriginAllowed(const CorsOptions& options, std::string_view origin) {
  if (origin.empty() || origin == "null") return false;
  if (options.any_origin) return true;
  for (const std::string& allowed : options.origins) {
    if (EqualsIgnoreCase(allowed, origin)) return true;
  }
  return false;
}

HttpHeaders CorsResponseHeaders(const CorsOptions& options, const HttpHeaders& request_headers) {
  HttpHeaders headers;
  if (!options.enabled()) return headers;
  headers.Add("Vary", "Origin");
  const std::string* origin = request_headers.Find("Origin");
  if (origin == nullptr || !IsOriginAllowed(options, *origin)) return headers;
  headers.Add("Access-Control-Allow-Origin", options.any_origin ? "*" : *origin);
  headers.Add("Access-Control-Expose-Headers", kExposeHeaders);
  return headers;
}

CorsPreflight AnswerCorsPreflight(const CorsOptions& options, const HttpHeaders& request_headers,
                                  std::string_view methods) {
  CorsPreflight answer;
  const std::string* origin = request_headers.Find("Origin");
  if (origin != nullptr && !IsOriginAllowed(options, *origin)) {
    answer.status = 403;
    return answer;
  }
  answer.headers.Add("Allow", std::string(methods));
  if (origin == nullptr) return answer;  // a plain OPTIONS: what the path serves
  const std::string requested_field = request_headers.Get("Access-Control-Request-Headers");
  const std::string requested(Trim(requested_field));
  answer.headers.Add("Access-Control-Allow-Methods", std::string(methods));
  answer.headers.Add("Access-Control-Allow-Headers",
                     !requested.empty() && IsFieldNameList(requested) ? requested : kDefaultAllowHeaders);
  answer.headers.Add("Access-Control-Max-Age", std::to_string(options.max_age_s));
  // The answer echoes these, so a cache must key on them too.
  answer.headers.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers");
  return answer;
}

}  // namespace surge::net
