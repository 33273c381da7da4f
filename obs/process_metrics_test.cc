#include "obs/process_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

namespace surge::obs {
namespace {

double Sample(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
}

TEST(ProcessMetricsTest, ReportsThisProcess) {
  Registry registry;
  ProcessMetrics metrics(&registry);
  // Burn a little CPU and memory so that both must show.
  std::vector<char> block(64 << 20, 1);
  volatile double sink = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(60);
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
  metrics.Refresh();
  const std::string text = "\n" + registry.Expose();
  EXPECT_GT(Sample(text, "process_cpu_seconds_total"), 0.02) << text;
  EXPECT_GT(Sample(text, "process_resident_memory_bytes"), 64.0 * (1 << 20)) << text;
  EXPECT_GE(Sample(text, "process_virtual_memory_bytes"), Sample(text, "process_resident_memory_bytes"));
  EXPECT_GE(Sample(text, "process_open_fds"), 3);  // stdin, stdout, stderr at least
  const double start = Sample(text, "process_start_time_seconds");
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 3600) << "this test process started within the hour";
  EXPECT_EQ(block[12345], 1);
}

}  // namespace
}  // namespace surge::obs
