// Helpers shared by the autoscale tests: instants from calendar dates, zones that must load.
#pragma once

#include <gtest/gtest.h>

#include "autoscale/civil_time.h"
#include "autoscale/time_zone.h"

namespace surge::autoscale {

// The instant of a UTC calendar reading.
inline Instant Utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  return FromUnixSeconds(DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second);
}

inline TimeZone MustLoad(const char* name) {
  StatusOr<TimeZone> zone = TimeZone::Load(name);
  EXPECT_TRUE(zone.ok()) << zone.status().ToString();
  return zone.ok() ? *zone : TimeZone::Utc();
}

}  // namespace surge::autoscale
