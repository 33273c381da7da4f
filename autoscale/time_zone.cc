#include "autoscale/time_zone.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "autoscale/read_file.h"

namespace surge::autoscale {
namespace {

// The six counts of a TZif header, in file order.
struct TzifCounts {
  uint32_t isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0;
  size_t DataBytes(size_t time_size) const {
    return size_t{timecnt} * time_size + timecnt + typecnt * 6 + charcnt + leapcnt * (time_size + 4) +
           isstdcnt + isutcnt;
  }
};
constexpr size_t kHeaderBytes = 44;

uint32_t BigEndian32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}
int64_t BigEndian64(const unsigned char* p) {
  return static_cast<int64_t>(uint64_t{BigEndian32(p)} << 32 | BigEndian32(p + 4));
}

// The header at `at` and a check that its data block (with `time_size`-byte times) is there.
StatusOr<TzifCounts> ReadHeader(std::string_view bytes, size_t at, size_t time_size, char* version) {
  if (bytes.size() < at + kHeaderBytes || bytes.compare(at, 4, "TZif") != 0) {
    return DataLossError("not a TZif file (bad magic or truncated header)");
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at + 20);
  *version = bytes[at + 4];
  TzifCounts c{BigEndian32(p), BigEndian32(p + 4), BigEndian32(p + 8),
               BigEndian32(p + 12), BigEndian32(p + 16), BigEndian32(p + 20)};
  if (c.typecnt == 0 || c.timecnt > 100000 || c.typecnt > 256 || c.charcnt > 65536 || c.leapcnt > 10000 ||
      (c.isutcnt != 0 && c.isutcnt != c.typecnt) || (c.isstdcnt != 0 && c.isstdcnt != c.typecnt)) {
    return DataLossError("TZif header counts are inconsistent");
  }
  if (c.leapcnt != 0) return UnimplementedError("TZif files with leap seconds (right/ zones) are not supported");
  if (bytes.size() < at + kHeaderBytes + c.DataBytes(time_size)) {
    return DataLossError("TZif data block is truncated");
  }
  return c;
}

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

}  // namespace

TimeZone TimeZone::Utc() { return TimeZone(); }

StatusOr<TimeZone> TimeZone::Load(std::string_view name, std::string_view zoneinfo_dir) {
  if (!ValidZoneName(name)) {
    return InvalidArgumentError("time zone '" + std::string(name) + "' is not an IANA zone name like Europe/Berlin");
  }
  std::string path = std::string(zoneinfo_dir) + "/" + std::string(name);
  StatusOr<std::string> bytes = ReadBoundedFile(path, kMaxTzifBytes, "TZif file");
  if (bytes.status().code() == StatusCode::kNotFound) {
    return NotFoundError("time zone '" + std::string(name) + "': no file " + path);
  }
  if (!bytes.ok()) return bytes.status().WithContext("time zone '" + std::string(name) + "'");
  StatusOr<TimeZone> zone = FromTzif(name, *bytes);
  if (!zone.ok()) return zone.status().WithContext("time zone '" + std::string(name) + "' (" + path + ")");
  return zone;
}

StatusOr<TimeZone> TimeZone::FromTzif(std::string_view name, std::string_view bytes) {
  char version = 0;
  ASSIGN_OR_RETURN(TzifCounts counts, ReadHeader(bytes, 0, 4, &version));
  size_t at = 0;
  size_t time_size = 4;
  if (version != '\0') {  // skip the 32-bit block: version 2+ repeats the data with 64-bit times
    at = kHeaderBytes + counts.DataBytes(4);
    ASSIGN_OR_RETURN(counts, ReadHeader(bytes, at, 8, &version));
    time_size = 8;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at + kHeaderBytes);
  const unsigned char* indices = p + size_t{counts.timecnt} * time_size;
  const unsigned char* types = indices + counts.timecnt;
  auto type_offset = [&](size_t type) { return static_cast<int32_t>(BigEndian32(types + 6 * type)); };
  TimeZone zone;
  zone.name_ = std::string(name);
  zone.initial_offset_s_ = type_offset(0);
  for (uint32_t i = 0; i < counts.timecnt; ++i) {
    int64_t when = time_size == 8 ? BigEndian64(p + 8 * i) : static_cast<int32_t>(BigEndian32(p + 4 * i));
    if (indices[i] >= counts.typecnt) return DataLossError("TZif transition names a missing local time type");
    if (!zone.transitions_s_.empty() && when <= zone.transitions_s_.back()) {
      return DataLossError("TZif transitions are not ascending");
    }
    zone.transitions_s_.push_back(when);
    zone.offsets_s_.push_back(type_offset(indices[i]));
  }
  if (time_size == 8) {
    size_t footer_at = at + kHeaderBytes + counts.DataBytes(8);
    std::string_view rest = bytes.substr(footer_at);
    if (rest.size() >= 2 && rest[0] == '\n') {
      std::string_view tz = rest.substr(1, rest.find('\n', 1) - 1);
      if (!tz.empty()) {
        ASSIGN_OR_RETURN(PosixTzRule rule, PosixTzRule::Parse(tz));
        zone.footer_ = rule;
      }
    }
  }
  return zone;
}

int32_t TimeZone::OffsetAt(int64_t unix_s) const {
  auto it = std::upper_bound(transitions_s_.begin(), transitions_s_.end(), unix_s);
  if (it == transitions_s_.begin()) {
    return transitions_s_.empty() && footer_ ? footer_->OffsetAt(unix_s) : initial_offset_s_;
  }
  if (it == transitions_s_.end() && footer_) return footer_->OffsetAt(unix_s);
  return offsets_s_[static_cast<size_t>(it - transitions_s_.begin()) - 1];
}

CivilTime TimeZone::ToLocal(int64_t unix_s) const { return CivilFromSeconds(unix_s + OffsetAt(unix_s)); }

}  // namespace surge::autoscale
