// SupervisorCore: WorkerSupervisor's state and its one thread (spawn, read output, health
// check, reap, restart, stop). Internal to router/workers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "router/workers/child_process.h"
#include "router/workers/health_inbox.h"
#include "router/workers/worker_supervisor.h"

namespace surge::router::internal {

using Clock = std::chrono::steady_clock;

// One worker slot ("<pool>-<index>"): it outlives the processes it restarts.
struct Worker {
  std::string pool;
  int32_t index = 0;
  std::string name;
  WorkerState state = WorkerState::kBackoff;
  std::optional<ChildProcess> child;
  std::string url;
  int64_t spawn_id = 0;  // tells this process's health answers from a predecessor's
  Clock::time_point up_at;
  // kStarting: the health deadline; kBackoff: the restart time; kStopping: SIGKILL time.
  Clock::time_point deadline;
  Clock::time_point next_health_at;
  bool health_in_flight = false;
  int64_t backoff_ms = 0;
  int32_t num_spawns = 0;
  bool ever_up = false;
  bool failed_before_up = false;
  bool retiring = false;      // resize down or Stop: removed once its process is reaped
  bool retire_requested = false;  // Retire(name): retired at the next round
  bool term_pending = false;  // SIGTERM once the events of this round are delivered
  bool restart_requested = false;  // Restart(): kDown, SIGTERM, then the usual restart
  bool exit_requested = false;     // the process now stopping or gone was restarted on request
  int32_t num_requested_restarts = 0;
  bool remove = false;
  std::string kill_reason;  // why the supervisor killed it, for last_exit
  std::string last_exit;
  std::string last_output_line;
  LineSplitter stdout_lines;
  LineSplitter stderr_lines;
  int log_fd = -1;  // -1: stderr with a prefix
  ~Worker();
};

class SupervisorCore {
 public:
  SupervisorCore(std::vector<WorkerSpec> specs, SupervisorOptions options, WorkerSupervisor::EventCallback on_event);
  ~SupervisorCore();

  void StartThread();
  Status WaitUntilUp(int64_t timeout_ms);
  std::vector<WorkerInfo> Snapshot() const;
  Status Resize(const std::string& pool, int32_t num_workers);
  Status Retire(const std::string& name);
  Status Restart(const std::string& url_or_name);
  void Stop();

 private:
  struct Pool {
    WorkerSpec spec;
    int32_t num_wanted = 0;
  };

  void Loop();
  // With mu_ held:
  bool Round(Clock::time_point now, std::vector<WorkerEvent>& events);
  void Reconcile(Clock::time_point now, std::vector<WorkerEvent>& events);
  void AddWorker(Pool& pool, Clock::time_point now);
  void Retire(Worker& worker, std::vector<WorkerEvent>& events);
  void ApplyRestarts(std::vector<WorkerEvent>& events);
  void ReadOutput(Worker& worker, Clock::time_point now);
  void ReadStream(Worker& worker, bool is_stdout, Clock::time_point now);
  void OnLine(Worker& worker, bool is_stdout, std::string_view line, Clock::time_point now);
  void ReapExited(Clock::time_point now, std::vector<WorkerEvent>& events);
  void OnExit(Worker& worker, int wait_status, Clock::time_point now, std::vector<WorkerEvent>& events);
  void HandleHealth(Clock::time_point now, std::vector<WorkerEvent>& events);
  void RunTimers(Clock::time_point now);
  void Spawn(Worker& worker, Clock::time_point now);
  void SendHealthCheck(Worker& worker);
  void SendPendingTerms();
  int PollTimeoutMs(Clock::time_point now) const;
  bool AllUp() const;
  std::optional<Status> StartupFailure() const;
  std::string Describe(const Worker& worker) const;
  void WriteLine(const Worker& worker, std::string_view line) const;

  const SupervisorOptions options_;
  const WorkerSupervisor::EventCallback on_event_;
  std::shared_ptr<HealthInbox> inbox_;
  std::unique_ptr<net::HttpClient> client_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Pool> pools_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int64_t next_spawn_id_ = 1;
  bool stopping_ = false;
  bool stopped_ = false;

  std::once_flag stop_once_;
  std::thread thread_;
};

}  // namespace surge::router::internal
