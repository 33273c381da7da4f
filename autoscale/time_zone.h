// TimeZone: an IANA time zone read from its TZif file (RFC 8536), converting UTC instants to
// local wall-clock time without touching the process's TZ (libstdc++ 12 has no chrono tzdb).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autoscale/civil_time.h"
#include "autoscale/posix_tz.h"
#include "base/status.h"

namespace surge::autoscale {

inline constexpr std::string_view kZoneinfoDir = "/usr/share/zoneinfo";
// Real TZif files are a few KiB; anything far larger is not one.
inline constexpr size_t kMaxTzifBytes = 256 * 1024;

class TimeZone {
 public:
  // UTC, built in (no file needed).
  static TimeZone Utc();
  // Reads `<zoneinfo_dir>/<name>`, e.g. "Europe/Berlin". The name must be a relative path of
  // [A-Za-z0-9_+-] components (no "..", no leading '/'). NotFound for an unknown zone,
  // DataLoss for a file that is not TZif or larger than kMaxTzifBytes.
  static StatusOr<TimeZone> Load(std::string_view name, std::string_view zoneinfo_dir = kZoneinfoDir);
  // Parses TZif bytes (version 1 to 4; the 64-bit data and footer of version 2+ when present).
  static StatusOr<TimeZone> FromTzif(std::string_view name, std::string_view bytes);

  // Offset east of UTC in seconds at the instant.
  int32_t OffsetAt(int64_t unix_s) const;
  // The local wall clock at the instant. In a DST overlap two instants give the same reading;
  // in a gap some readings are never produced.
  CivilTime ToLocal(int64_t unix_s) const;
  CivilTime ToLocal(Instant t) const { return ToLocal(UnixSeconds(t)); }
  const std::string& name() const { return name_; }

 private:
  std::string name_ = "UTC";
  std::vector<int64_t> transitions_s_;  // [num_transitions] ascending UTC instants
  std::vector<int32_t> offsets_s_;      // [num_transitions] offset in force from each transition
  int32_t initial_offset_s_ = 0;        // before the first transition (local time type 0)
  std::optional<PosixTzRule> footer_;   // after the last transition
};

}  // namespace surge::autoscale
