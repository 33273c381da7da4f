// CronExpr: a 5-field cron expression (minute hour day-of-month month day-of-week) matched
// against a wall-clock minute, with Vixie cron's rules.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "autoscale/civil_time.h"
#include "base/status.h"

namespace surge::autoscale {

// Syntax per field: `*`, a number, a name (JAN..DEC, SUN..SAT, any case), a range `a-b`,
// a step `*/n` or `a-b/n`, and comma lists of those. Day-of-week 0 and 7 are Sunday.
// The macros @yearly @annually @monthly @weekly @daily @midnight @hourly are accepted.
// Day matching follows Vixie cron: when both day-of-month and day-of-week are restricted
// (neither field starts with `*`), a day matches if EITHER does; otherwise both must.
class CronExpr {
 public:
  // Errors name the field: "cron '0 25 * * *': hour: 25 is out of range 0-23".
  static StatusOr<CronExpr> Parse(std::string_view text);

  // Whether the minute containing this wall-clock reading matches (seconds are ignored).
  bool Matches(const CivilTime& t) const;
  const std::string& text() const { return text_; }

 private:
  friend class CronFieldParser;
  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // bit 1..31
  std::bitset<13> months_;         // bit 1..12
  std::bitset<7> days_of_week_;    // bit 0 (Sunday)..6
  bool dom_star_ = false;
  bool dow_star_ = false;
};

}  // namespace surge::autoscale
