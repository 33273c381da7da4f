#include "autoscale/cron.h"

#include <array>
#include <cctype>
#include <vector>

namespace surge::autoscale {
namespace {

constexpr std::array<const char*, 12> kMonthNames = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                     "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<const char*, 7> kDayNames = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

struct FieldSpec {
  const char* name;
  int min_value;
  int max_value;
  const char* const* names;  // nullptr or max-min+1 names (months start at 1)
  int num_names;
};
constexpr FieldSpec kFields[5] = {
    {"minute", 0, 59, nullptr, 0},
    {"hour", 0, 23, nullptr, 0},
    {"day-of-month", 1, 31, nullptr, 0},
    {"month", 1, 12, kMonthNames.data(), 12},
    {"day-of-week", 0, 7, kDayNames.data(), 7},  // 7 is Sunday too
};

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(sep, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

std::string_view ExpandMacro(std::string_view text) {
  if (text == "@yearly" || text == "@annually") return "0 0 1 1 *";
  if (text == "@monthly") return "0 0 1 * *";
  if (text == "@weekly") return "0 0 * * 0";
  if (text == "@daily" || text == "@midnight") return "0 0 * * *";
  if (text == "@hourly") return "0 * * * *";
  return text;
}

}  // namespace

// Parses one field into a bit set; errors carry the field's name.
class CronFieldParser {
 public:
  CronFieldParser(std::string_view expr, const FieldSpec& spec) : expr_(expr), spec_(spec) {}

  template <size_t N>
  Status Run(std::string_view field, std::bitset<N>* bits) {
    if (field.empty()) return Error("empty field");
    for (std::string_view item : Split(field, ',')) {
      int low = 0, high = 0, step = 1;
      RETURN_IF_ERROR(Item(item, &low, &high, &step));
      for (int v = low; v <= high; v += step) bits->set(static_cast<size_t>(v == 7 && N == 7 ? 0 : v));
    }
    return OkStatus();
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgumentError("cron '" + std::string(expr_) + "': " + spec_.name + ": " + what);
  }

  Status Item(std::string_view item, int* low, int* high, int* step) {
    if (item.empty()) return Error("empty list item");
    std::vector<std::string_view> by_step = Split(item, '/');
    if (by_step.size() > 2) return Error("'" + std::string(item) + "' has more than one '/'");
    std::string_view range = by_step[0];
    if (range == "*") {
      *low = spec_.min_value;
      *high = spec_.max_value == 7 ? 6 : spec_.max_value;
    } else {
      std::vector<std::string_view> ends = Split(range, '-');
      if (ends.size() > 2) return Error("'" + std::string(range) + "' is not a range a-b");
      ASSIGN_OR_RETURN(*low, Value(ends[0]));
      *high = *low;
      if (ends.size() == 2) {
        ASSIGN_OR_RETURN(*high, Value(ends[1]));
        if (*high < *low) return Error("range '" + std::string(range) + "' runs backwards");
      }
    }
    if (by_step.size() == 2) {
      if (range != "*" && range.find('-') == std::string_view::npos) {
        return Error("step '" + std::string(item) + "' needs a range or '*' before '/'");
      }
      ASSIGN_OR_RETURN(*step, Value(by_step[1], /*allow_names=*/false, /*check_range=*/false));
      if (*step < 1) return Error("step must be at least 1");
    }
    return OkStatus();
  }

  StatusOr<int> Value(std::string_view text, bool allow_names = true, bool check_range = true) {
    if (text.empty()) return Error("missing number");
    if (std::isdigit(static_cast<unsigned char>(text[0]))) {
      int value = 0;
      for (char c : text) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || value > 1000) {
          return Error("'" + std::string(text) + "' is not a number");
        }
        value = value * 10 + (c - '0');
      }
      if (check_range && (value < spec_.min_value || value > spec_.max_value)) {
        return Error(std::to_string(value) + " is out of range " + std::to_string(spec_.min_value) + "-" +
                     std::to_string(spec_.max_value));
      }
      return value;
    }
    for (int i = 0; allow_names && i < spec_.num_names; ++i) {
      std::string_view name = spec_.names[i];
      bool same = text.size() == name.size();
      for (size_t k = 0; same && k < text.size(); ++k) {
        same = std::toupper(static_cast<unsigned char>(text[k])) == name[k];
      }
      if (same) return spec_.min_value + i;
    }
    return Error("'" + std::string(text) + "' is not a number" + (spec_.num_names > 0 ? " or name" : ""));
  }

  std::string_view expr_;
  const FieldSpec& spec_;
};

StatusOr<CronExpr> CronExpr::Parse(std::string_view text) {
  CronExpr expr;
  expr.text_ = std::string(text);
  std::string_view body = ExpandMacro(text);
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (pos < body.size()) {
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < body.size() && body[end] != ' ' && body[end] != '\t') ++end;
    if (end > pos) fields.push_back(body.substr(pos, end - pos));
    pos = end;
  }
  if (fields.size() != 5) {
    return InvalidArgumentError("cron '" + std::string(text) + "': expected 5 fields (minute hour day-of-month " +
                                "month day-of-week), got " + std::to_string(fields.size()));
  }
  RETURN_IF_ERROR(CronFieldParser(text, kFields[0]).Run(fields[0], &expr.minutes_));
  RETURN_IF_ERROR(CronFieldParser(text, kFields[1]).Run(fields[1], &expr.hours_));
  RETURN_IF_ERROR(CronFieldParser(text, kFields[2]).Run(fields[2], &expr.days_of_month_));
  RETURN_IF_ERROR(CronFieldParser(text, kFields[3]).Run(fields[3], &expr.months_));
  RETURN_IF_ERROR(CronFieldParser(text, kFields[4]).Run(fields[4], &expr.days_of_week_));
  // Vixie cron: a field "starting with *" (including "*/2") counts as unrestricted.
  expr.dom_star_ = fields[2][0] == '*';
  expr.dow_star_ = fields[4][0] == '*';
  return expr;
}

bool CronExpr::Matches(const CivilTime& t) const {
  if (!minutes_[static_cast<size_t>(t.minute)] || !hours_[static_cast<size_t>(t.hour)] ||
      !months_[static_cast<size_t>(t.month)]) {
    return false;
  }
  bool dom = days_of_month_[static_cast<size_t>(t.day)];
  bool dow = days_of_week_[static_cast<size_t>(t.weekday)];
  return dom_star_ || dow_star_ ? dom && dow : dom || dow;
}

}  // namespace surge::autoscale
