// WorkerSupervisor against real `surge serve` workers on stories260K (SURGE_BINARY, one
// thread each): start-up on distinct working URLs, restart after kill -9 on a new URL,
// back-off for a worker that cannot start, resize up and down (kDown before SIGTERM), no
// child left after Stop, and none left after a kill -9 of the supervising process.
#include "router/workers/worker_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "net/http_client.h"

extern char** environ;

namespace surge::router {
namespace {

using std::chrono::milliseconds;

WorkerSpec Spec(const std::string& pool, int32_t num_workers, std::vector<std::string> extra_args = {}) {
  WorkerSpec spec{pool, num_workers, SURGE_BINARY, "models/stories260K", {"--threads", "1", "--drain-timeout", "2"}};
  spec.engine_args.insert(spec.engine_args.end(), extra_args.begin(), extra_args.end());
  return spec;
}

SupervisorOptions TestOptions() {
  SupervisorOptions options;
  options.health_timeout_ms = 20'000;
  options.restart_backoff_initial_ms = 100;
  options.restart_backoff_max_ms = 1'000;
  options.stop_timeout_ms = 5'000;
  return options;
}

// The events, with whether the worker's process was still alive when its kDown came.
class EventLog {
 public:
  void Add(const WorkerEvent& event) {
    std::lock_guard lock(mu_);
    events_.push_back(event);
    alive_at_event_.push_back(kill(event.pid, 0) == 0);
    changed_.notify_all();
  }
  // Waits (up to 20 s) until `num` events of `kind` arrived; all events so far.
  std::vector<WorkerEvent> WaitFor(WorkerEvent::Kind kind, size_t num) {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return Count(kind) >= num; });
    return events_;
  }
  std::vector<WorkerEvent> events() {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<bool> alive_at_event() {
    std::lock_guard lock(mu_);
    return alive_at_event_;
  }

 private:
  size_t Count(WorkerEvent::Kind kind) const {
    return std::count_if(events_.begin(), events_.end(), [&](const WorkerEvent& e) { return e.kind == kind; });
  }
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<WorkerEvent> events_;
  std::vector<bool> alive_at_event_;
};

std::unique_ptr<WorkerSupervisor> StartOrDie(std::vector<WorkerSpec> specs, SupervisorOptions options,
                                             EventLog& log) {
  auto supervisor =
      WorkerSupervisor::Start(std::move(specs), std::move(options), [&log](const WorkerEvent& e) { log.Add(e); });
  CHECK(supervisor.ok()) << supervisor.status().ToString();
  return std::move(supervisor).value();
}

void ExpectServes(const std::string& url) {
  auto health = net::Fetch("GET", url + "/health");
  ASSERT_TRUE(health.ok()) << url << ": " << health.status().ToString();
  EXPECT_EQ(health->status, 200) << url;
  auto models = net::Fetch("GET", url + "/v1/models");
  ASSERT_TRUE(models.ok()) << url;
  EXPECT_NE(models->body.find("stories260K"), std::string::npos) << models->body;
}

// Gone, not a zombie: reaped by whoever was its parent.
bool ProcessGone(int32_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

const WorkerInfo* Find(const std::vector<WorkerInfo>& workers, const std::string& name) {
  for (const WorkerInfo& info : workers) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

TEST(WorkerSupervisorTest, TwoWorkersUpOnDistinctUrlsAndStopLeavesNoChild) {
  EventLog log;
  auto supervisor = StartOrDie({Spec("p", 2)}, TestOptions(), log);
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  std::vector<WorkerEvent> events = log.WaitFor(WorkerEvent::kUp, 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NE(events[0].url, events[1].url);
  std::set<std::string> names;
  for (const WorkerEvent& event : events) {
    EXPECT_EQ(event.pool, "p");
    names.insert(event.name);
    ExpectServes(event.url);
  }
  EXPECT_EQ(names, (std::set<std::string>{"p-0", "p-1"}));
  std::vector<WorkerInfo> workers = supervisor->workers();
  ASSERT_EQ(workers.size(), 2u);
  for (const WorkerInfo& info : workers) {
    EXPECT_EQ(info.state, WorkerState::kUp);
    EXPECT_EQ(info.num_restarts, 0);
  }
  supervisor->Stop();
  supervisor->Stop();  // idempotent
  events = log.events();
  ASSERT_EQ(events.size(), 4u);
  for (int i : {2, 3}) EXPECT_EQ(events[i].kind, WorkerEvent::kDown);
  for (const WorkerInfo& info : workers) {
    EXPECT_TRUE(ProcessGone(info.pid)) << info.pid;
    EXPECT_EQ(waitpid(info.pid, nullptr, WNOHANG), -1);  // already reaped by Stop
  }
  EXPECT_TRUE(supervisor->workers().empty());
}

TEST(WorkerSupervisorTest, KilledWorkerRestartsOnNewUrl) {
  EventLog log;
  auto supervisor = StartOrDie({Spec("p", 2)}, TestOptions(), log);
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  const std::vector<WorkerInfo> before = supervisor->workers();
  const WorkerInfo* victim = Find(before, "p-0");
  ASSERT_NE(victim, nullptr);
  ASSERT_EQ(kill(victim->pid, SIGKILL), 0);
  std::vector<WorkerEvent> events = log.WaitFor(WorkerEvent::kUp, 3);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].kind, WorkerEvent::kDown);
  EXPECT_EQ(events[2].name, "p-0");
  EXPECT_EQ(events[2].url, victim->url);
  EXPECT_EQ(events[2].pid, victim->pid);
  EXPECT_EQ(events[3].kind, WorkerEvent::kUp);
  EXPECT_EQ(events[3].name, "p-0");
  EXPECT_NE(events[3].pid, victim->pid);
  EXPECT_NE(events[3].url, victim->url);
  ExpectServes(events[3].url);
  const std::vector<WorkerInfo> after = supervisor->workers();
  EXPECT_EQ(Find(after, "p-0")->num_restarts, 1);
  EXPECT_EQ(Find(after, "p-0")->last_exit.rfind("killed by signal 9", 0), 0u) << Find(after, "p-0")->last_exit;
  EXPECT_EQ(Find(after, "p-1")->num_restarts, 0);
  EXPECT_EQ(Find(after, "p-1")->pid, Find(before, "p-1")->pid);
}

// A worker that exits at once is retried with doubling delays (100, 200, 400, 400 ms), not
// in a tight loop; its output goes to LOG_DIR/NAME.log.
TEST(WorkerSupervisorTest, WorkerThatCannotStartBacksOff) {
  const std::string log_dir = testing::TempDir() + "/surge_workers_logs_" + std::to_string(getpid());
  SupervisorOptions options = TestOptions();
  options.restart_backoff_max_ms = 400;
  options.log_dir = log_dir;
  EventLog log;
  auto supervisor = StartOrDie({Spec("bad", 1, {"--no-such-engine-flag"})}, options, log);
  const auto start = std::chrono::steady_clock::now();
  Status up = supervisor->WaitUntilUp(20'000);
  EXPECT_EQ(up.code(), StatusCode::kUnavailable);
  EXPECT_NE(up.message().find("bad-0"), std::string::npos) << up.message();
  EXPECT_NE(up.message().find("exited with code 2"), std::string::npos) << up.message();
  EXPECT_NE(up.message().find("no-such-engine-flag"), std::string::npos) << up.message();
  // The restart times: each one's delay at least the back-off, which doubles to its cap.
  std::vector<double> restart_ms;
  for (int32_t seen = 0; restart_ms.size() < 5;) {
    std::this_thread::sleep_for(milliseconds(2));
    const int32_t num = supervisor->workers().at(0).num_restarts;
    const double now_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for (; seen < num; ++seen) restart_ms.push_back(now_ms);
    ASSERT_LT(now_ms, 10'000) << "too few restarts";
  }
  const std::vector<double> min_gap_ms{200, 400, 400, 400};  // before restarts 2, 3, 4, 5
  for (size_t i = 0; i < min_gap_ms.size(); ++i) {
    EXPECT_GE(restart_ms[i + 1] - restart_ms[i], min_gap_ms[i] - 5) << "restart " << i + 2;
  }
  EXPECT_LT(restart_ms[4] - restart_ms[3], 1'500) << "back-off past its cap (uncapped: 1600 ms)";
  EXPECT_TRUE(log.events().empty());  // never up: no events
  supervisor->Stop();
  std::ifstream file(log_dir + "/bad-0.log");
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_NE(text.str().find("no-such-engine-flag"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("exited with code 2"), std::string::npos) << text.str();
  std::filesystem::remove_all(log_dir);
}

TEST(WorkerSupervisorTest, ResizeUpThenDownStopsNewestAfterTheirKDown) {
  EventLog log;
  auto supervisor = StartOrDie({Spec("p", 2), Spec("q", 0)}, TestOptions(), log);
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  EXPECT_EQ(supervisor->Resize("nope", 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(supervisor->Resize("p", -1).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(supervisor->Resize("p", 3).ok());
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  std::vector<WorkerEvent> events = log.WaitFor(WorkerEvent::kUp, 3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].name, "p-2");
  ExpectServes(events[2].url);
  const std::vector<WorkerInfo> three = supervisor->workers();
  ASSERT_TRUE(supervisor->Resize("p", 1).ok());
  events = log.WaitFor(WorkerEvent::kDown, 2);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[3].name, "p-2");  // the newest first
  EXPECT_EQ(events[4].name, "p-1");
  const std::vector<bool> alive = log.alive_at_event();
  EXPECT_TRUE(alive[3] && alive[4]) << "kDown must come before the worker is stopped";
  for (int i = 0; i < 1000 && supervisor->workers().size() > 1; ++i) std::this_thread::sleep_for(milliseconds(10));
  const std::vector<WorkerInfo> one = supervisor->workers();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "p-0");
  EXPECT_EQ(one[0].state, WorkerState::kUp);
  EXPECT_TRUE(ProcessGone(Find(three, "p-1")->pid));
  EXPECT_TRUE(ProcessGone(Find(three, "p-2")->pid));
  ExpectServes(one[0].url);
}

// Retire stops the named worker, not the newest, and the pool stays one smaller; a later
// Resize up fills the lowest free index again.
TEST(WorkerSupervisorTest, RetireStopsTheNamedWorkerForGood) {
  EventLog log;
  auto supervisor = StartOrDie({Spec("p", 2)}, TestOptions(), log);
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  log.WaitFor(WorkerEvent::kUp, 2);
  const std::vector<WorkerInfo> two = supervisor->workers();
  EXPECT_EQ(supervisor->Retire("p-9").code(), StatusCode::kNotFound);
  ASSERT_TRUE(supervisor->Retire("p-0").ok());
  EXPECT_EQ(supervisor->Retire("p-0").code(), StatusCode::kNotFound) << "already retiring";
  std::vector<WorkerEvent> events = log.WaitFor(WorkerEvent::kDown, 1);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].name, "p-0");
  for (int i = 0; i < 1000 && supervisor->workers().size() > 1; ++i) std::this_thread::sleep_for(milliseconds(10));
  const std::vector<WorkerInfo> one = supervisor->workers();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "p-1");
  EXPECT_TRUE(ProcessGone(Find(two, "p-0")->pid));
  std::this_thread::sleep_for(milliseconds(300));  // no restart comes back for it
  EXPECT_EQ(supervisor->workers().size(), 1u);
  ASSERT_TRUE(supervisor->Resize("p", 2).ok());
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  EXPECT_NE(Find(supervisor->workers(), "p-0"), nullptr);
}

// Restart (the restart_instance alarm action): kDown while the old process still runs
// (SIGTERM after it), then kUp from a new process at a new url; counted as a requested
// restart, so the autoscaler does not take it for a reclaim.
TEST(WorkerSupervisorTest, RestartReplacesTheProcessAndCountsItAsRequested) {
  EventLog log;
  auto supervisor = StartOrDie({Spec("p", 2)}, TestOptions(), log);
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  log.WaitFor(WorkerEvent::kUp, 2);
  const std::vector<WorkerInfo> before = supervisor->workers();
  const WorkerInfo* victim = Find(before, "p-1");
  ASSERT_NE(victim, nullptr);
  EXPECT_EQ(supervisor->Restart("http://127.0.0.1:1").code(), StatusCode::kNotFound);
  ASSERT_TRUE(supervisor->Restart(victim->url).ok());  // by url, as an alarm names it
  EXPECT_EQ(supervisor->Restart("p-1").code(), StatusCode::kUnavailable) << "already restarting";
  std::vector<WorkerEvent> events = log.WaitFor(WorkerEvent::kUp, 3);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].kind, WorkerEvent::kDown);
  EXPECT_EQ(events[2].url, victim->url);
  EXPECT_TRUE(log.alive_at_event()[2]) << "kDown must come before SIGTERM";
  EXPECT_EQ(events[3].kind, WorkerEvent::kUp);
  EXPECT_EQ(events[3].name, "p-1");
  EXPECT_NE(events[3].pid, victim->pid);
  ExpectServes(events[3].url);
  EXPECT_TRUE(ProcessGone(victim->pid));
  const std::vector<WorkerInfo> after = supervisor->workers();
  EXPECT_EQ(Find(after, "p-1")->num_restarts, 1);
  EXPECT_EQ(Find(after, "p-1")->num_requested_restarts, 1);
  EXPECT_FALSE(Find(after, "p-1")->restarting_on_request);
  EXPECT_EQ(Find(after, "p-1")->last_exit, "restarted on request (SIGTERM)");
  EXPECT_EQ(Find(after, "p-0")->pid, Find(before, "p-0")->pid);
  EXPECT_EQ(Find(after, "p-0")->num_requested_restarts, 0);
}

TEST(WorkerSupervisorTest, StartRefusesBadSpecsNamingThem) {
  auto refuse = [](std::vector<WorkerSpec> specs, SupervisorOptions options, const std::string& needle) {
    auto started = WorkerSupervisor::Start(std::move(specs), std::move(options), nullptr);
    ASSERT_FALSE(started.ok()) << needle;
    EXPECT_EQ(started.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(started.status().message().find(needle), std::string::npos) << started.status().message();
  };
  refuse({Spec("p", 1, {"--port", "9000"})}, TestOptions(), "--port");
  refuse({Spec("p", 1, {"--host=0.0.0.0"})}, TestOptions(), "--host");
  refuse({Spec("p", 1), Spec("p", 1)}, TestOptions(), "'p' given twice");
  refuse({Spec("p", kMaxWorkersPerPool + 1)}, TestOptions(), "spawn must be in");
  WorkerSpec no_binary = Spec("p", 1);
  no_binary.surge_binary = "/nonexistent/surge";
  refuse({no_binary}, TestOptions(), "/nonexistent/surge");
  SupervisorOptions options = TestOptions();
  options.restart_backoff_max_ms = 1;
  refuse({Spec("p", 1)}, options, "back-off max");
}

// A child of the supervising process that starts two workers, prints their pids and waits
// to be killed. Runs only when re-executed by OrphanSafetyTest.
TEST(WorkerSupervisorHelper, RunUntilKilled) {
  if (std::getenv("SURGE_WORKERS_HELPER") == nullptr) GTEST_SKIP() << "helper for OrphanSafetyTest";
  EventLog log;
  auto supervisor = StartOrDie({Spec("p", 2)}, TestOptions(), log);
  ASSERT_TRUE(supervisor->WaitUntilUp(20'000).ok());
  for (const WorkerInfo& info : supervisor->workers()) std::printf("%d\n", info.pid);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(60));
}

// kill -9 of the supervising process: its workers get SIGTERM (PR_SET_PDEATHSIG), drain and
// exit 0. This test process is their subreaper, so it can wait for them.
TEST(OrphanSafetyTest, WorkersStopWhenTheirSupervisorIsKilled) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args{"/proc/self/exe", "--gtest_filter=WorkerSupervisorHelper.RunUntilKilled"};
  std::vector<char*> argv{args[0].data(), args[1].data(), nullptr};
  std::vector<std::string> env_strings{"SURGE_WORKERS_HELPER=1"};
  for (char** entry = environ; *entry != nullptr; ++entry) env_strings.emplace_back(*entry);
  std::vector<char*> env;
  for (std::string& entry : env_strings) env.push_back(entry.data());
  env.push_back(nullptr);
  pid_t helper = -1;
  ASSERT_EQ(posix_spawn(&helper, argv[0], &actions, nullptr, argv.data(), env.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  FILE* helper_out = fdopen(out[0], "r");
  std::vector<pid_t> workers;
  char line[256];
  while (workers.size() < 2 && std::fgets(line, sizeof line, helper_out) != nullptr) {
    if (const int pid = std::atoi(line); pid > 0) workers.push_back(pid);
  }
  std::fclose(helper_out);
  ASSERT_EQ(kill(helper, SIGKILL), 0);
  ASSERT_EQ(waitpid(helper, nullptr, 0), helper);
  ASSERT_EQ(workers.size(), 2u) << "the helper did not report its workers";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (pid_t worker : workers) {
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(worker, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    if (done == 0) {
      ADD_FAILURE() << "worker " << worker << " outlived its supervisor by 10 s";
      kill(worker, SIGKILL);
      waitpid(worker, nullptr, 0);
      continue;
    }
    EXPECT_EQ(done, worker);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "not a clean SIGTERM drain: " << status;
  }
}

}  // namespace
}  // namespace surge::router
