#include "base/duration.h"

#include <cctype>
#include <cmath>

namespace surge {

StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto error = [&] {
    return InvalidArgumentError("'" + std::string(text) + "' is not a duration like \"500ms\", \"30s\", \"5m\", \"1h30m\"");
  };
  if (text.empty()) return error();
  double total_ms = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t begin = pos;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
    std::string_view number_text = text.substr(begin, pos - begin);
    if (pos == begin || number_text.find('.') != number_text.rfind('.') || number_text.front() == '.') return error();
    double number = std::stod(std::string(number_text));
    double unit_ms = 0;
    if (text.substr(pos, 2) == "ms") unit_ms = 1, pos += 2;
    else if (text.substr(pos, 1) == "s") unit_ms = 1000, pos += 1;
    else if (text.substr(pos, 1) == "m") unit_ms = 60000, pos += 1;
    else if (text.substr(pos, 1) == "h") unit_ms = 3600000, pos += 1;
    else return error();
    total_ms += number * unit_ms;
  }
  if (total_ms > 1e12) return error();
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
