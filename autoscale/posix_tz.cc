#include "autoscale/posix_tz.h"

#include <cctype>
#include <string>

#include "autoscale/civil_time.h"

namespace surge::autoscale {

// Recursive-descent reader of the POSIX TZ grammar: std offset [dst [offset] [,start[/time],end[/time]]].
class PosixTzParser {
 public:
  explicit PosixTzParser(std::string_view text) : text_(text) {}

  StatusOr<PosixTzRule> Run() {
    PosixTzRule rule;
    RETURN_IF_ERROR(Name());
    ASSIGN_OR_RETURN(int32_t std_posix, Offset(/*allow_sign=*/true));
    rule.std_offset_s_ = -std_posix;  // POSIX counts west of Greenwich as positive
    if (pos_ == text_.size()) return rule;
    rule.has_dst_ = true;
    RETURN_IF_ERROR(Name());
    rule.dst_offset_s_ = rule.std_offset_s_ + 3600;
    if (pos_ < text_.size() && text_[pos_] != ',') {
      ASSIGN_OR_RETURN(int32_t dst_posix, Offset(true));
      rule.dst_offset_s_ = -dst_posix;
    }
    if (pos_ == text_.size()) {
      // No rule given: POSIX leaves it implementation-defined; glibc uses the US rule.
      rule.start_ = {PosixTzRule::Transition::Kind::kMonthWeekDay, 3, 2, 0, 0, 7200};
      rule.end_ = {PosixTzRule::Transition::Kind::kMonthWeekDay, 11, 1, 0, 0, 7200};
      return rule;
    }
    if (!Consume(',')) return Error("expected ',' before the daylight-time start rule");
    ASSIGN_OR_RETURN(rule.start_, Rule());
    if (!Consume(',')) return Error("expected ',' before the daylight-time end rule");
    ASSIGN_OR_RETURN(rule.end_, Rule());
    if (pos_ != text_.size()) return Error("trailing characters");
    return rule;
  }

 private:
  Status Error(const std::string& what) const {
    return DataLossError("TZ string '" + std::string(text_) + "': " + what + " at offset " +
                         std::to_string(pos_));
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status Name() {
    size_t begin = pos_;
    if (Consume('<')) {
      while (pos_ < text_.size() && text_[pos_] != '>') ++pos_;
      if (!Consume('>')) return Error("unterminated <zone name>");
      return OkStatus();
    }
    while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_ - begin >= 3 ? OkStatus() : Error("expected a zone abbreviation of 3+ letters");
  }
  StatusOr<int> Number(int max_value) {
    size_t begin = pos_;
    int value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) && pos_ - begin < 4) {
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == begin || value > max_value) return Error("expected a number up to " + std::to_string(max_value));
    return value;
  }
  // [+-]hh[:mm[:ss]] in seconds; hours up to 167 (TZif v3 extension for rule times).
  StatusOr<int32_t> Offset(bool allow_sign) {
    int sign = 1;
    if (allow_sign && Consume('-')) sign = -1;
    else if (allow_sign) Consume('+');
    ASSIGN_OR_RETURN(int hours, Number(167));
    int32_t seconds = hours * 3600;
    if (Consume(':')) {
      ASSIGN_OR_RETURN(int minutes, Number(59));
      seconds += minutes * 60;
      if (Consume(':')) {
        ASSIGN_OR_RETURN(int secs, Number(59));
        seconds += secs;
      }
    }
    return sign * seconds;
  }
  StatusOr<PosixTzRule::Transition> Rule() {
    using Kind = PosixTzRule::Transition::Kind;
    PosixTzRule::Transition t;
    if (Consume('M')) {
      t.kind = Kind::kMonthWeekDay;
      ASSIGN_OR_RETURN(t.month, Number(12));
      if (t.month < 1 || !Consume('.')) return Error("expected Mm.w.d");
      ASSIGN_OR_RETURN(t.week, Number(5));
      if (t.week < 1 || !Consume('.')) return Error("expected Mm.w.d");
      ASSIGN_OR_RETURN(t.weekday, Number(6));
    } else if (Consume('J')) {
      t.kind = Kind::kJulianNoLeap;
      ASSIGN_OR_RETURN(t.day, Number(365));
      if (t.day < 1) return Error("Jn day must be 1..365");
    } else {
      t.kind = Kind::kZeroBasedDay;
      ASSIGN_OR_RETURN(t.day, Number(365));
    }
    if (Consume('/')) {
      ASSIGN_OR_RETURN(t.time_s, Offset(true));
    }
    return t;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

StatusOr<PosixTzRule> PosixTzRule::Parse(std::string_view text) { return PosixTzParser(text).Run(); }

int64_t PosixTzRule::LocalSecondsIn(const Transition& t, int year) {
  int64_t day = 0;
  switch (t.kind) {
    case Transition::Kind::kMonthWeekDay: {
      int64_t first = DaysFromCivil(year, t.month, 1);
      int offset = (t.weekday - WeekdayFromDays(first) + 7) % 7;  // first such weekday
      int mday = 1 + offset + 7 * (t.week - 1);
      while (mday > DaysInMonth(year, t.month)) mday -= 7;  // week 5 means "last"
      day = first + mday - 1;
      break;
    }
    case Transition::Kind::kJulianNoLeap:
      day = DaysFromCivil(year, 1, 1) + t.day - 1 + (IsLeapYear(year) && t.day >= 60 ? 1 : 0);
      break;
    case Transition::Kind::kZeroBasedDay:
      day = DaysFromCivil(year, 1, 1) + t.day;
      break;
  }
  return day * 86400 + t.time_s;
}

int32_t PosixTzRule::OffsetAt(int64_t unix_s) const {
  if (!has_dst_) return std_offset_s_;
  int year = CivilFromSeconds(unix_s + std_offset_s_).year;
  // The start rule is read in standard time, the end rule in daylight time (POSIX).
  int64_t start_utc = LocalSecondsIn(start_, year) - std_offset_s_;
  int64_t end_utc = LocalSecondsIn(end_, year) - dst_offset_s_;
  bool in_dst = start_utc < end_utc ? (unix_s >= start_utc && unix_s < end_utc)  // northern
                                    : (unix_s >= start_utc || unix_s < end_utc);  // southern
  return in_dst ? dst_offset_s_ : std_offset_s_;
}

}  // namespace surge::autoscale
