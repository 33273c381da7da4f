#include "api/bearer_token.h"

namespace surge::api {
namespace {

constexpr std::string_view kScheme = "bearer";

bool IsBearerScheme(std::string_view scheme) {
  if (scheme.size() != kScheme.size()) return false;
  for (size_t i = 0; i < scheme.size(); ++i) {
    const char c = scheme[i] >= 'A' && scheme[i] <= 'Z' ? static_cast<char>(scheme[i] - 'A' + 'a') : scheme[i];
    if (c != kScheme[i]) return false;
  }
  return true;
}

std::string_view TrimBlanks(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

std::string_view BearerToken(std::string_view authorization) {
  const size_t scheme_size = kScheme.size();
  if (authorization.size() <= scheme_size || !IsBearerScheme(authorization.substr(0, scheme_size)) ||
      (authorization[scheme_size] != ' ' && authorization[scheme_size] != '\t')) {
    return {};
  }
  return TrimBlanks(authorization.substr(scheme_size));
}

}  // namespace surge::api
