// Civil (calendar) time arithmetic and the virtual clock the autoscaler is driven by.
#pragma once

#include <chrono>
#include <cstdint>

namespace surge::autoscale {

// Every autoscale API takes the time as an argument (virtual time), so tests and the
// simulator drive it without sleeping. Milliseconds since the Unix epoch, UTC.
using Instant = std::chrono::sys_time<std::chrono::milliseconds>;
using Duration = std::chrono::milliseconds;

inline int64_t UnixSeconds(Instant t) {
  return std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count();
}
inline Instant FromUnixSeconds(int64_t s) { return Instant(std::chrono::seconds(s)); }

// A wall-clock reading in some zone (or UTC).
struct CivilTime {
  int year = 1970;
  int month = 1;    // 1..12
  int day = 1;      // 1..31
  int hour = 0;     // 0..23
  int minute = 0;   // 0..59
  int second = 0;   // 0..59
  int weekday = 4;  // 0 = Sunday .. 6 = Saturday
};

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithms).
int64_t DaysFromCivil(int year, int month, int day);
// The weekday (0 = Sunday) of a day number from DaysFromCivil.
int WeekdayFromDays(int64_t days);
bool IsLeapYear(int year);
int DaysInMonth(int year, int month);
// Seconds since the epoch, read as a wall clock with no offset, broken down.
CivilTime CivilFromSeconds(int64_t seconds);

}  // namespace surge::autoscale
