#include "obs/process_metrics.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace surge::obs {
namespace {

struct ProcStat {
  double cpu_seconds = 0;
  double start_seconds_since_boot = 0;
  double virtual_bytes = 0;
  double resident_bytes = 0;
};

// /proc/self/stat fields after the ")" closing the command name: 14 utime, 15 stime,
// 22 starttime (clock ticks), 23 vsize (bytes), 24 rss (pages).
bool ReadProcStat(ProcStat* out) {
  std::ifstream file("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  double values[25] = {};
  for (int index = 3; index <= 24 && fields >> field; ++index) values[index] = std::strtod(field.c_str(), nullptr);
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  out->cpu_seconds = (values[14] + values[15]) / ticks;
  out->start_seconds_since_boot = values[22] / ticks;
  out->virtual_bytes = values[23];
  out->resident_bytes = values[24] * static_cast<double>(sysconf(_SC_PAGESIZE));
  return true;
}

int CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int num = 0;
  while (const dirent* entry = readdir(dir)) num += entry->d_name[0] != '.' ? 1 : 0;
  closedir(dir);
  return num - 1;  // the directory stream's own descriptor
}

double BootTimeSeconds() {
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  return static_cast<double>(real.tv_sec - boot.tv_sec) + (real.tv_nsec - boot.tv_nsec) * 1e-9;
}

}  // namespace

ProcessMetrics::ProcessMetrics(Registry* registry)
    : cpu_seconds_(registry->AddCounter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds")),
      resident_bytes_(registry->AddGauge("process_resident_memory_bytes", "Resident memory size in bytes")),
      virtual_bytes_(registry->AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes")),
      open_fds_(registry->AddGauge("process_open_fds", "Number of open file descriptors")),
      start_time_seconds_(registry->AddGauge("process_start_time_seconds",
                                             "Start time of the process since unix epoch in seconds")) {
  Refresh();
}

void ProcessMetrics::Refresh() {
  ProcStat stat;
  if (!ReadProcStat(&stat)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (stat.cpu_seconds > last_cpu_seconds_) {
    cpu_seconds_.Increment(stat.cpu_seconds - last_cpu_seconds_);
    last_cpu_seconds_ = stat.cpu_seconds;
  }
  resident_bytes_.Set(stat.resident_bytes);
  virtual_bytes_.Set(stat.virtual_bytes);
  open_fds_.Set(CountOpenFds());
  start_time_seconds_.Set(BootTimeSeconds() + stat.start_seconds_since_boot);
}

}  // namespace surge::obs
