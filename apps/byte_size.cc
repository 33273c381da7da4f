#include "apps/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

namespace surge {

StatusOr<ByteSize> ParseByteSize(const std::string& text, const std::string& flag, bool allow_fraction) {
  static const std::map<std::string, double> kUnits = {
      {"", 1},          {"b", 1},          {"k", 0x1p10},     {"kib", 0x1p10},    {"kb", 1e3},
      {"m", 0x1p20},    {"mib", 0x1p20},   {"mb", 1e6},       {"g", 0x1p30},      {"gib", 0x1p30},
      {"gb", 1e9},      {"t", 0x1p40},     {"tib", 0x1p40},   {"tb", 1e12}};
  const Status error = InvalidArgumentError("--" + flag + ": expected a size such as 2GiB, 512MiB or 1048576" +
                                            std::string(allow_fraction ? " or a fraction such as 0.2" : "") +
                                            ", got '" + text + "'");
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(number) || number <= 0) return error;
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) return error;
  if (unit.empty() && text.find('.') != std::string::npos && number <= 1) {
    if (!allow_fraction) return error;
    return ByteSize{0, number, true};
  }
  const double bytes = number * it->second;
  if (bytes < 1 || bytes > 0x1p62) return error;
  return ByteSize{static_cast<int64_t>(bytes), 0, false};
}

int64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace surge
