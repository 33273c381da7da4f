// TimeZone: an IANA time zone read from its TZif file by cctz (Debian's libcctz-dev), converting
// UTC instants to local wall-clock time without touching the process's TZ (libstdc++ 12 has no
// chrono tzdb).
#pragma once

#include <cctz/time_zone.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "autoscale/civil_time.h"
#include "base/status.h"

namespace surge::autoscale {

inline constexpr std::string_view kZoneinfoDir = "/usr/share/zoneinfo";
// Real TZif files are a few KiB; anything far larger is not one.
inline constexpr size_t kMaxTzifBytes = 256 * 1024;

class TimeZone {
 public:
  // UTC, built in (no file needed).
  static TimeZone Utc();
  // Reads `<zoneinfo_dir>/<name>`, e.g. "Europe/Berlin": the transitions, then the POSIX TZ
  // footer rule past them. The name must be a relative path of [A-Za-z0-9_+-] components (no
  // "..", no leading '/'). NotFound for an unknown zone, DataLoss for a file that is not TZif
  // or larger than kMaxTzifBytes. cctz keeps each loaded zone for the process's life.
  static StatusOr<TimeZone> Load(std::string_view name, std::string_view zoneinfo_dir = kZoneinfoDir);

  // Offset east of UTC in seconds at the instant.
  int32_t OffsetAt(int64_t unix_s) const;
  // The local wall clock at the instant. In a DST overlap two instants give the same reading;
  // in a gap some readings are never produced.
  CivilTime ToLocal(int64_t unix_s) const;
  CivilTime ToLocal(Instant t) const { return ToLocal(UnixSeconds(t)); }
  const std::string& name() const { return name_; }

 private:
  std::string name_ = "UTC";
  cctz::time_zone zone_ = cctz::utc_time_zone();
};

}  // namespace surge::autoscale
