// PosixTzRule: the POSIX TZ string at the end of a TZif file ("CET-1CEST,M3.5.0,M10.5.0/3"),
// which gives the zone's offsets for instants after the file's last listed transition.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace surge::autoscale {

class PosixTzRule {
 public:
  // Parses the TZ string; errors say what part is malformed.
  static StatusOr<PosixTzRule> Parse(std::string_view text);

  // UTC offset (seconds east of Greenwich) in force at the instant.
  int32_t OffsetAt(int64_t unix_s) const;
  bool has_dst() const { return has_dst_; }

 private:
  // One end of daylight time: a day rule and the local time of day it takes effect.
  struct Transition {
    enum class Kind { kMonthWeekDay, kJulianNoLeap, kZeroBasedDay } kind = Kind::kMonthWeekDay;
    int month = 0, week = 0, weekday = 0;  // Mm.w.d: weekday d of week w (5 = last) of month m
    int day = 0;                           // Jn (1..365, no Feb 29) or n (0..365)
    int32_t time_s = 7200;                 // local time of day; may be negative or past 24h
  };
  // Local seconds since the epoch at which the transition happens in the given year.
  static int64_t LocalSecondsIn(const Transition& transition, int year);

  int32_t std_offset_s_ = 0;
  int32_t dst_offset_s_ = 0;
  bool has_dst_ = false;
  Transition start_, end_;
  friend class PosixTzParser;
};

}  // namespace surge::autoscale
