#include "base/duration.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace surge {

// Longest total a duration may spell (about 31.7 years): far past any interval or window,
// and well inside int64 milliseconds.
constexpr double kMaxDurationMs = 1e12;

StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  const std::string shown = text.size() > 64 ? std::string(text.substr(0, 64)) + "..." : std::string(text);
  auto error = [&] {
    return InvalidArgumentError("'" + shown + "' is not a duration like \"500ms\", \"30s\", \"5m\", \"1h30m\"");
  };
  auto too_long = [&] {
    return InvalidArgumentError("'" + shown + "' is longer than the limit of " +
                                std::to_string(static_cast<int64_t>(kMaxDurationMs / 3.6e6)) + "h");
  };
  if (text.empty()) return error();
  double total_ms = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t begin = pos;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
    std::string_view number_text = text.substr(begin, pos - begin);
    if (pos == begin || number_text.find('.') != number_text.rfind('.') || number_text.front() == '.') return error();
    // from_chars, not std::stod: 309+ digits are out of a double's range, an error here
    // rather than an exception (issue 31).
    double number = 0;
    const auto [end, ec] = std::from_chars(number_text.data(), number_text.data() + number_text.size(), number);
    const bool below_one = number_text.find_first_not_of('0') == number_text.find('.');  // "0.000...1"
    if (ec == std::errc::result_out_of_range && below_one) number = 0;  // under a double's range: nothing
    else if (ec == std::errc::result_out_of_range) return too_long();
    else if (ec != std::errc() || end != number_text.data() + number_text.size()) return error();
    double unit_ms = 0;
    if (text.substr(pos, 2) == "ms") unit_ms = 1, pos += 2;
    else if (text.substr(pos, 1) == "s") unit_ms = 1000, pos += 1;
    else if (text.substr(pos, 1) == "m") unit_ms = 60000, pos += 1;
    else if (text.substr(pos, 1) == "h") unit_ms = 3600000, pos += 1;
    else return error();
    total_ms += number * unit_ms;
    if (!(total_ms <= kMaxDurationMs)) return too_long();  // each step: the sum never reaches inf
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(total_ms)));
}

std::string FormatDuration(std::chrono::milliseconds ms) {
  const int64_t count = ms.count();
  if (count != 0 && count % 3'600'000 == 0) return std::to_string(count / 3'600'000) + "h";
  if (count != 0 && count % 60'000 == 0) return std::to_string(count / 60'000) + "m";
  if (count % 1000 == 0) return std::to_string(count / 1000) + "s";
  return std::to_string(count) + "ms";
}

}  // namespace surge
