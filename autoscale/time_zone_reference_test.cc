// TimeZone against an independent reader of the same files: Python's zoneinfo (run as a
// child process, so this process's TZ is never touched), over two centuries and zones with
// odd rules: negative DST (Dublin), half- and quarter-hour offsets, southern DST, the
// footer rule past 2037.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "autoscale/time_zone.h"

namespace surge::autoscale {
namespace {

constexpr const char* kZones[] = {
    "Europe/Berlin", "America/New_York", "Australia/Sydney", "Europe/Dublin",     "Asia/Kolkata",
    "Asia/Kathmandu", "Pacific/Chatham", "America/Santiago", "Africa/Casablanca", "America/St_Johns",
    "Asia/Tehran",   "Pacific/Apia",     "Europe/Moscow",    "America/Sao_Paulo", "Antarctica/Troll"};

std::vector<int64_t> Instants() {
  std::vector<int64_t> out;
  for (int64_t t = -2208988800; t < 4133980800; t += 86400 * 17 + 3607) out.push_back(t);  // 1900..2101
  return out;
}

// {zone: [offset per instant]} from Python, or an empty map when python3 is missing.
std::map<std::string, std::vector<int64_t>> PythonOffsets(const std::vector<int64_t>& instants) {
  std::string script = "/usr/bin/python3 -c '\n"
                       "import sys, datetime\n"
                       "from zoneinfo import ZoneInfo\n"
                       "times = [int(x) for x in sys.stdin.read().split()]\n"
                       "for z in sys.argv[1:]:\n"
                       "    tz = ZoneInfo(z)\n"
                       "    print(z, *[int(datetime.datetime.fromtimestamp(t, tz).utcoffset().total_seconds()) for t in times])\n"
                       "'";
  for (const char* zone : kZones) script += std::string(" ") + zone;
  std::string input_path = testing::TempDir() + "/surge_tz_instants.txt";
  FILE* input = std::fopen(input_path.c_str(), "w");
  for (int64_t t : instants) std::fprintf(input, "%lld\n", static_cast<long long>(t));
  std::fclose(input);
  FILE* pipe = popen((script + " < " + input_path).c_str(), "r");
  std::map<std::string, std::vector<int64_t>> out;
  if (!pipe) return out;
  std::string text;
  char buffer[1 << 16];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) text.append(buffer, n);
  pclose(pipe);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string zone;
    fields >> zone;
    int64_t offset = 0;
    while (fields >> offset) out[zone].push_back(offset);
  }
  return out;
}

TEST(TimeZoneReferenceTest, AgreesWithPythonZoneinfo) {
  std::vector<int64_t> instants = Instants();
  std::map<std::string, std::vector<int64_t>> expected = PythonOffsets(instants);
  if (expected.empty()) GTEST_SKIP() << "/usr/bin/python3 with zoneinfo is not available";
  for (const char* name : kZones) {
    StatusOr<TimeZone> zone = TimeZone::Load(name);
    ASSERT_TRUE(zone.ok()) << zone.status().ToString();
    const std::vector<int64_t>& want = expected[name];
    ASSERT_EQ(want.size(), instants.size()) << name;
    int num_mismatches = 0;
    for (size_t i = 0; i < instants.size() && num_mismatches < 5; ++i) {
      if (zone->OffsetAt(instants[i]) != want[i]) {
        ++num_mismatches;
        ADD_FAILURE() << name << " at " << instants[i] << ": " << zone->OffsetAt(instants[i]) << " != " << want[i];
      }
    }
  }
}

}  // namespace
}  // namespace surge::autoscale
