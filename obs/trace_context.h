// W3C Trace Context: the `traceparent` and `tracestate` headers that carry a trace across
// processes (https://www.w3.org/TR/trace-context/), and random trace and span ids.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace surge::obs {

// 16 bytes, big-endian as in the header's hex; all zero is invalid.
using TraceId = std::array<uint8_t, 16>;
// 8 bytes; all zero is invalid (and means "no parent" in a span).
using SpanId = std::array<uint8_t, 8>;

inline constexpr uint8_t kSampledFlag = 0x01;  // trace-flags bit 0

// What a traceparent names, plus the tracestate that travels with it.
struct TraceContext {
  TraceId trace_id{};
  SpanId span_id{};            // the parent-id of the header: the sender's span
  uint8_t trace_flags = 0;     // bit 0: sampled; other bits carried as received (version 00)
  std::string trace_state;     // validated, bounded; "" when absent
  bool remote = false;         // parsed from a header rather than made here

  bool sampled() const { return (trace_flags & kSampledFlag) != 0; }
  bool valid() const;          // both ids non-zero
};

// Lower-case hex of the bytes ("4bf92f3577b34da6a3ce929d0e0e4736").
std::string ToHex(const TraceId& id);
std::string ToHex(const SpanId& id);
bool IsZero(const TraceId& id);
bool IsZero(const SpanId& id);

// Parses a traceparent value; nullopt when it must be ignored (the receiver then starts a
// new trace). Version 00 must be exactly "00-<32 hex>-<16 hex>-<2 hex>", lower-case. A
// higher version (not "ff") is read by the version-00 layout from a value of at least 55
// characters, which must end there or continue with '-'; of its flags only the sampled
// bit is kept. Surrounding spaces and tabs are ignored.
std::optional<TraceContext> ParseTraceparent(std::string_view value);
// "00-<trace id>-<span id>-<flags>": this process always speaks version 00.
std::string FormatTraceparent(const TraceContext& context);

inline constexpr size_t kMaxTracestateMembers = 32;
inline constexpr size_t kMaxTracestateChars = 512;  // what the spec asks vendors to propagate
inline constexpr size_t kMaxTracestateMemberChars = 128;  // longer ones go first when cutting

// The tracestate to carry on: members ("key=value") validated by the spec's grammar and
// rejoined with ','; empty members dropped. An invalid member, a duplicate key or more
// than 32 members discards the whole header (""). Past 512 characters, members longer
// than 128 characters are removed first, then members from the end.
std::string SanitizeTracestate(std::string_view value);

// Random ids from a per-thread generator seeded from std::random_device; never zero.
TraceId RandomTraceId();
SpanId RandomSpanId();

}  // namespace surge::obs
