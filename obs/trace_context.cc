#include "obs/trace_context.h"

#include <algorithm>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace surge::obs {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int LowerHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is invalid in traceparent
}

// `hex` must hold exactly 2 * N lower-case hex digits.
template <size_t N>
bool ParseHex(std::string_view hex, std::array<uint8_t, N>* out) {
  if (hex.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    const int high = LowerHexValue(hex[2 * i]);
    const int low = LowerHexValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*out)[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return true;
}

template <size_t N>
std::string HexOf(const std::array<uint8_t, N>& bytes) {
  std::string hex(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    hex[2 * i] = kHexDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kHexDigits[bytes[i] & 0xf];
  }
  return hex;
}

std::string_view TrimOws(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool IsLcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsKeyChar(char c) { return IsLcAlpha(c) || IsDigit(c) || c == '_' || c == '-' || c == '*' || c == '/'; }

// simple-key, tenant-id or system-id: a first character allowed by `first`, then up to
// `max_rest` key characters.
bool IsKeyPart(std::string_view part, bool (*first)(char), size_t max_rest) {
  if (part.empty() || part.size() > max_rest + 1 || !first(part[0])) return false;
  return std::all_of(part.begin() + 1, part.end(), IsKeyChar);
}

bool IsTracestateKey(std::string_view key) {
  const size_t at = key.find('@');
  if (at == std::string_view::npos) return IsKeyPart(key, IsLcAlpha, 255);
  auto alnum = [](char c) { return IsLcAlpha(c) || IsDigit(c); };
  return IsKeyPart(key.substr(0, at), +alnum, 240) && IsKeyPart(key.substr(at + 1), IsLcAlpha, 13);
}

bool IsNonBlankChr(char c) { return c >= 0x21 && c <= 0x7e && c != ',' && c != '='; }

bool IsTracestateValue(std::string_view value) {
  if (value.empty() || value.size() > 256 || !IsNonBlankChr(value.back())) return false;
  return std::all_of(value.begin(), value.end(), [](char c) { return c == ' ' || IsNonBlankChr(c); });
}

// Drops members until the joined list fits kMaxTracestateChars: the long ones first, then
// from the end.
void FitTracestate(std::vector<std::string_view>* members) {
  auto joined_size = [&] {
    size_t size = 0;
    for (std::string_view member : *members) size += member.size() + 1;
    return size == 0 ? 0 : size - 1;
  };
  for (size_t i = members->size(); i-- > 0 && joined_size() > kMaxTracestateChars;) {
    if ((*members)[i].size() > kMaxTracestateMemberChars) members->erase(members->begin() + i);
  }
  while (joined_size() > kMaxTracestateChars) members->pop_back();
}

std::mt19937_64& Generator() {
  thread_local std::mt19937_64 generator([] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(),
                       static_cast<unsigned>(std::hash<std::thread::id>()(std::this_thread::get_id()))};
    return std::mt19937_64(seed);
  }());
  return generator;
}

template <size_t N>
std::array<uint8_t, N> RandomNonZero() {
  std::array<uint8_t, N> id{};
  while (std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; })) {
    for (size_t i = 0; i < N; i += 8) {
      uint64_t bits = Generator()();
      for (size_t j = i; j < std::min(N, i + 8); ++j, bits >>= 8) id[j] = static_cast<uint8_t>(bits);
    }
  }
  return id;
}

}  // namespace

bool IsZero(const TraceId& id) { return std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; }); }
bool IsZero(const SpanId& id) { return std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; }); }
bool TraceContext::valid() const { return !IsZero(trace_id) && !IsZero(span_id); }
std::string ToHex(const TraceId& id) { return HexOf(id); }
std::string ToHex(const SpanId& id) { return HexOf(id); }

std::optional<TraceContext> ParseTraceparent(std::string_view value) {
  value = TrimOws(value);
  constexpr size_t kVersion00Size = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2
  if (value.size() < kVersion00Size) return std::nullopt;
  std::array<uint8_t, 1> version{};
  if (!ParseHex(value.substr(0, 2), &version) || version[0] == 0xff) return std::nullopt;
  if (value[2] != '-' || value[35] != '-' || value[52] != '-') return std::nullopt;
  if (version[0] == 0 && value.size() != kVersion00Size) return std::nullopt;
  if (value.size() > kVersion00Size && value[kVersion00Size] != '-') return std::nullopt;
  TraceContext context;
  std::array<uint8_t, 1> flags{};
  if (!ParseHex(value.substr(3, 32), &context.trace_id) || !ParseHex(value.substr(36, 16), &context.span_id) ||
      !ParseHex(value.substr(53, 2), &flags)) {
    return std::nullopt;
  }
  if (!context.valid()) return std::nullopt;
  // A later version's other flags may mean something else: keep only what 00 defines.
  context.trace_flags = version[0] == 0 ? flags[0] : flags[0] & kSampledFlag;
  context.remote = true;
  return context;
}

std::string FormatTraceparent(const TraceContext& context) {
  const std::array<uint8_t, 1> flags = {context.trace_flags};
  return "00-" + HexOf(context.trace_id) + "-" + HexOf(context.span_id) + "-" + HexOf(flags);
}

std::string SanitizeTracestate(std::string_view value) {
  std::vector<std::string_view> members;
  std::set<std::string_view> keys;
  while (true) {
    const size_t comma = value.find(',');
    const std::string_view member = TrimOws(value.substr(0, comma));
    if (!member.empty()) {
      const size_t equals = member.find('=');
      if (equals == std::string_view::npos) return "";
      const std::string_view key = member.substr(0, equals);
      if (!IsTracestateKey(key) || !IsTracestateValue(member.substr(equals + 1))) return "";
      if (!keys.insert(key).second || members.size() == kMaxTracestateMembers) return "";
      members.push_back(member);
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  FitTracestate(&members);
  std::string joined;
  for (std::string_view member : members) {
    if (!joined.empty()) joined += ',';
    joined += member;
  }
  return joined;
}

TraceId RandomTraceId() { return RandomNonZero<16>(); }
SpanId RandomSpanId() { return RandomNonZero<8>(); }

}  // namespace surge::obs
