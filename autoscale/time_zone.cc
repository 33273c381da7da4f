#include "autoscale/time_zone.h"

#include <algorithm>
#include <cctype>

#include "autoscale/read_file.h"

namespace surge::autoscale {
namespace {

bool ValidZoneName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '/' || name.back() == '/') return false;
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = std::min(name.find('/', begin), name.size());
    std::string_view part = name.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '+') return false;
    }
    begin = end + 1;
  }
  return true;
}

cctz::time_point<cctz::seconds> TimePoint(int64_t unix_s) {
  return cctz::time_point<cctz::seconds>(cctz::seconds(unix_s));
}

}  // namespace

TimeZone TimeZone::Utc() { return TimeZone(); }

StatusOr<TimeZone> TimeZone::Load(std::string_view name, std::string_view zoneinfo_dir) {
  if (!ValidZoneName(name)) {
    return InvalidArgumentError("time zone '" + std::string(name) + "' is not an IANA zone name like Europe/Berlin");
  }
  const std::string path = std::string(zoneinfo_dir) + "/" + std::string(name);
  // Missing and oversized files are told apart here: cctz only answers whether it loaded.
  StatusOr<std::string> bytes = ReadBoundedFile(path, kMaxTzifBytes, "TZif file");
  if (bytes.status().code() == StatusCode::kNotFound) {
    return NotFoundError("time zone '" + std::string(name) + "': no file " + path);
  }
  if (!bytes.ok()) return bytes.status().WithContext("time zone '" + std::string(name) + "'");
  TimeZone zone;
  // An absolute path: cctz reads this file, never $TZDIR's.
  if (!cctz::load_time_zone(path, &zone.zone_)) {
    return DataLossError("time zone '" + std::string(name) + "' (" + path + "): not a valid TZif file");
  }
  zone.name_ = std::string(name);
  return zone;
}

int32_t TimeZone::OffsetAt(int64_t unix_s) const {
  return static_cast<int32_t>(zone_.lookup(TimePoint(unix_s)).offset);
}

CivilTime TimeZone::ToLocal(int64_t unix_s) const {
  const cctz::civil_second local = cctz::convert(TimePoint(unix_s), zone_);
  // cctz counts weekdays from Monday = 0; CivilTime from Sunday = 0.
  const int weekday = (static_cast<int>(cctz::get_weekday(cctz::civil_day(local))) + 1) % 7;
  return CivilTime{static_cast<int>(local.year()), local.month(), local.day(), local.hour(), local.minute(),
                   local.second(), weekday};
}

}  // namespace surge::autoscale
