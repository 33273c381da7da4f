// WorkerSupervisor's fault paths, with /bin/sh scripts standing in for `surge serve` (fault
// injection only; the real behaviour is tested against surge serve in
// worker_supervisor_test.cc): a worker that never answers /health is killed at the health
// timeout and restarted; one that ignores SIGTERM is killed at the stop timeout.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "router/workers/worker_supervisor.h"

namespace surge::router {
namespace {

using Clock = std::chrono::steady_clock;

// An executable script in the test's temp dir; it gets `serve MODEL --host ... --port 0`.
std::string WriteScript(const std::string& name, const std::string& body) {
  const std::string path = testing::TempDir() + "/" + name + "_" + std::to_string(getpid()) + ".sh";
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0755);
  return path;
}

WorkerSpec FakeSpec(const std::string& binary) { return WorkerSpec{"fake", 1, binary, "model", {}}; }

// Prints a ready line for a port where nothing listens: /health never answers.
TEST(SupervisorFaultTest, NoHealthWithinTimeoutIsKilledAndRestarted) {
  const std::string script =
      WriteScript("no_health", "echo 'surge serve: ready on http://127.0.0.1:9 (model m)'\nexec sleep 30\n");
  SupervisorOptions options;
  options.health_timeout_ms = 300;
  options.restart_backoff_initial_ms = 50;
  options.restart_backoff_max_ms = 50;
  options.stop_timeout_ms = 1'000;
  auto supervisor = WorkerSupervisor::Start({FakeSpec(script)}, options, nullptr);
  ASSERT_TRUE(supervisor.ok()) << supervisor.status().ToString();
  const Status up = (*supervisor)->WaitUntilUp(5'000);
  EXPECT_EQ(up.code(), StatusCode::kUnavailable) << up.ToString();
  EXPECT_NE(up.message().find("no /health 200 within 300 ms"), std::string::npos) << up.message();
  std::vector<WorkerInfo> workers = (*supervisor)->workers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].last_output_line, "surge serve: ready on http://127.0.0.1:9 (model m)");
  for (int i = 0; i < 300 && (*supervisor)->workers()[0].num_restarts < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE((*supervisor)->workers()[0].num_restarts, 2);
}

// Stop: SIGTERM is ignored, so SIGKILL follows after stop_timeout_ms — not before, and not
// much later.
TEST(SupervisorFaultTest, StopKillsWhatIgnoresSigterm) {
  const std::string script = WriteScript("ignores_term", "trap '' TERM\nwhile :; do sleep 0.05; done\n");
  SupervisorOptions options;
  options.stop_timeout_ms = 400;
  auto supervisor = WorkerSupervisor::Start({FakeSpec(script)}, options, nullptr);
  ASSERT_TRUE(supervisor.ok());
  int32_t pid = -1;
  for (int i = 0; i < 500 && pid < 0; ++i) {
    pid = (*supervisor)->workers().empty() ? -1 : (*supervisor)->workers()[0].pid;
    if (pid < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the trap is set
  const Clock::time_point start = Clock::now();
  (*supervisor)->Stop();
  const double stop_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  EXPECT_GE(stop_ms, 400);
  EXPECT_LT(stop_ms, 2'000);
  EXPECT_TRUE(kill(pid, 0) != 0 && errno == ESRCH) << "worker " << pid << " survived Stop";
  EXPECT_TRUE((*supervisor)->workers().empty());
}

// Resize to 0 while the worker waits out its back-off: nothing is respawned.
TEST(SupervisorFaultTest, ResizeToZeroDuringBackoffRespawnsNothing) {
  const std::string script = WriteScript("exits", "exit 3\n");
  SupervisorOptions options;
  options.restart_backoff_initial_ms = 200;
  auto supervisor = WorkerSupervisor::Start({FakeSpec(script)}, options, nullptr);
  ASSERT_TRUE(supervisor.ok());
  EXPECT_EQ((*supervisor)->WaitUntilUp(5'000).code(), StatusCode::kUnavailable);
  ASSERT_EQ((*supervisor)->workers().at(0).state, WorkerState::kBackoff);
  ASSERT_TRUE((*supervisor)->Resize("fake", 0).ok());
  for (int i = 0; i < 100 && !(*supervisor)->workers().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE((*supervisor)->workers().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the restart time
  EXPECT_TRUE((*supervisor)->workers().empty());
  EXPECT_TRUE((*supervisor)->WaitUntilUp(100).ok());  // zero wanted, zero up

}

}  // namespace
}  // namespace surge::router
