#include "router/workers/supervisor_core.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/logging.h"

namespace surge::router::internal {
namespace {

// Without pidfds, exits are noticed by polling waitpid this often.
constexpr int kReapPollMs = 50;
constexpr int64_t kHealthRetryMs = 50;
constexpr int64_t kHealthRequestTimeoutMs = 2'000;
constexpr size_t kMaxReadPerRoundBytes = 1 << 20;  // one chatty worker cannot starve the loop
constexpr size_t kMaxLastLineBytes = 512;

int64_t MsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

void WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t num_written = write(fd, text.data(), text.size());
    if (num_written < 0 && errno == EINTR) continue;
    if (num_written <= 0) return;
    text.remove_prefix(static_cast<size_t>(num_written));
  }
}

}  // namespace

Worker::~Worker() {
  if (log_fd >= 0) close(log_fd);
}

SupervisorCore::SupervisorCore(std::vector<WorkerSpec> specs, SupervisorOptions options,
                               WorkerSupervisor::EventCallback on_event)
    : options_(std::move(options)),
      on_event_(std::move(on_event)),
      inbox_(std::make_shared<HealthInbox>()),
      client_(std::make_unique<net::HttpClient>()) {
  for (WorkerSpec& spec : specs) {
    const int32_t num_wanted = spec.num_workers;
    const std::string name = spec.pool;
    pools_[name] = Pool{std::move(spec), num_wanted};
  }
}

SupervisorCore::~SupervisorCore() {
  Stop();
  client_.reset();  // joins its io thread: no health callback runs after this
}

// The thread spawns every worker: PR_SET_PDEATHSIG fires when the spawning *thread* exits,
// so it must be one that lives exactly as long as the workers.
void SupervisorCore::StartThread() {
  inbox_->Wake();  // the first round (which spawns the workers) runs at once
  thread_ = std::thread([this] { Loop(); });
}

void SupervisorCore::Stop() {
  std::call_once(stop_once_, [this] {
    CHECK(std::this_thread::get_id() != thread_.get_id()) << "WorkerSupervisor::Stop called from its own callback";
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    inbox_->Wake();
    if (thread_.joinable()) thread_.join();
  });
}

void SupervisorCore::Loop() {
  std::vector<WorkerEvent> events;
  bool done = false;
  while (!done) {
    std::vector<pollfd> fds{{inbox_->wake_fd, POLLIN, 0}};
    int timeout_ms;
    {
      std::lock_guard lock(mu_);
      for (const auto& worker : workers_) {
        if (!worker->child) continue;
        for (int fd : {worker->child->stdout_fd(), worker->child->stderr_fd(), worker->child->pidfd()}) {
          if (fd >= 0) fds.push_back({fd, POLLIN, 0});
        }
      }
      timeout_ms = PollTimeoutMs(Clock::now());
    }
    // Only this thread closes these descriptors, so they stay valid through poll.
    poll(fds.data(), fds.size(), timeout_ms);
    inbox_->DrainWake();
    {
      std::lock_guard lock(mu_);
      done = Round(Clock::now(), events);
    }
    changed_.notify_all();
    for (const WorkerEvent& event : events) {
      if (on_event_) on_event_(event);
    }
    events.clear();
    SendPendingTerms();  // after the kDowns: the gateway stops routing first
  }
}

bool SupervisorCore::Round(Clock::time_point now, std::vector<WorkerEvent>& events) {
  for (auto& worker : workers_) ReadOutput(*worker, now);
  ReapExited(now, events);
  HandleHealth(now, events);
  ApplyRestarts(events);
  Reconcile(now, events);
  RunTimers(now);
  std::erase_if(workers_, [](const std::unique_ptr<Worker>& worker) { return worker->remove; });
  if (stopping_ && workers_.empty()) stopped_ = true;
  return stopped_;
}

int SupervisorCore::PollTimeoutMs(Clock::time_point now) const {
  int64_t timeout_ms = 1'000;
  for (const auto& worker : workers_) {
    if (worker->child && !worker->child->reaped() && worker->child->pidfd() < 0) {
      timeout_ms = std::min<int64_t>(timeout_ms, kReapPollMs);
    }
    if (!worker->term_pending) timeout_ms = std::min(timeout_ms, MsBetween(now, worker->deadline) + 1);
    if (worker->state == WorkerState::kStarting && !worker->url.empty() && !worker->health_in_flight) {
      timeout_ms = std::min(timeout_ms, MsBetween(now, worker->next_health_at) + 1);
    }
  }
  return static_cast<int>(std::max<int64_t>(timeout_ms, 0));
}

void SupervisorCore::Reconcile(Clock::time_point now, std::vector<WorkerEvent>& events) {
  if (stopping_) {
    for (auto& worker : workers_) {
      if (!worker->retiring) Retire(*worker, events);
    }
    return;
  }
  for (auto& worker : workers_) {
    if (worker->retire_requested && !worker->retiring) Retire(*worker, events);
  }
  for (auto& [name, pool] : pools_) {
    std::vector<Worker*> live;
    for (auto& worker : workers_) {
      if (worker->pool == name && !worker->retiring) live.push_back(worker.get());
    }
    for (size_t i = live.size(); i < static_cast<size_t>(pool.num_wanted); ++i) AddWorker(pool, now);
    std::sort(live.begin(), live.end(), [](Worker* a, Worker* b) { return a->index > b->index; });
    for (size_t i = 0; i + pool.num_wanted < live.size(); ++i) Retire(*live[i], events);
  }
}

void SupervisorCore::AddWorker(Pool& pool, Clock::time_point now) {
  auto worker = std::make_unique<Worker>();
  worker->pool = pool.spec.pool;
  // The lowest index no slot of the pool (draining ones included) holds: names stay unique.
  auto taken = [&](int32_t index) {
    return std::any_of(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& other) {
      return other->pool == worker->pool && other->index == index;
    });
  };
  while (taken(worker->index)) ++worker->index;
  worker->name = worker->pool + "-" + std::to_string(worker->index);
  worker->backoff_ms = options_.restart_backoff_initial_ms;
  if (!options_.log_dir.empty()) {
    const std::string path = options_.log_dir + "/" + worker->name + ".log";
    worker->log_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (worker->log_fd < 0) {
      LOG(WARNING) << "cannot open " << path << "; worker output goes to stderr";
    }
  }
  Worker& added = *worker;
  workers_.push_back(std::move(worker));
  Spawn(added, now);
}

void SupervisorCore::Retire(Worker& worker, std::vector<WorkerEvent>& events) {
  worker.retiring = true;
  if (!worker.child) {
    worker.remove = true;  // in back-off: nothing runs
    return;
  }
  if (worker.state == WorkerState::kUp) {
    events.push_back({WorkerEvent::kDown, worker.pool, worker.name, worker.url, worker.child->pid()});
  }
  worker.state = WorkerState::kStopping;
  worker.term_pending = true;
}

// A restarted worker leaves the gateway (kDown) and gets SIGTERM (it drains) as a retired
// one does, but stays a slot: its exit takes the crash path, back-off and respawn.
void SupervisorCore::ApplyRestarts(std::vector<WorkerEvent>& events) {
  for (auto& worker : workers_) {
    if (!worker->restart_requested) continue;
    worker->restart_requested = false;
    if (!worker->child || worker->retiring || worker->state == WorkerState::kStopping) continue;
    if (worker->state == WorkerState::kUp) {
      events.push_back({WorkerEvent::kDown, worker->pool, worker->name, worker->url, worker->child->pid()});
    }
    worker->kill_reason = "restarted on request (SIGTERM)";
    worker->exit_requested = true;
    ++worker->num_requested_restarts;
    worker->state = WorkerState::kStopping;
    worker->term_pending = true;
  }
}

void SupervisorCore::SendPendingTerms() {
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  for (auto& worker : workers_) {
    if (!worker->term_pending) continue;
    worker->term_pending = false;
    if (worker->child) worker->child->Signal(SIGTERM);
    worker->deadline = now + std::chrono::milliseconds(options_.stop_timeout_ms);
  }
}

void SupervisorCore::Spawn(Worker& worker, Clock::time_point now) {
  const WorkerSpec& spec = pools_.at(worker.pool).spec;
  std::vector<std::string> argv{spec.surge_binary, "serve",  spec.model_path, "--host",
                                options_.host,     "--port", "0"};
  argv.insert(argv.end(), spec.engine_args.begin(), spec.engine_args.end());
  if (worker.num_spawns > 0) {
    WriteLine(worker, "restarting (restart " + std::to_string(worker.num_spawns) + ")");
  }
  ++worker.num_spawns;
  worker.url.clear();
  worker.kill_reason.clear();
  worker.exit_requested = false;
  worker.health_in_flight = false;
  worker.stdout_lines = LineSplitter();
  worker.stderr_lines = LineSplitter();
  StatusOr<ChildProcess> child = ChildProcess::Spawn(argv);
  if (!child.ok()) {
    worker.last_exit = child.status().message();
    worker.failed_before_up = true;
    worker.state = WorkerState::kBackoff;
    worker.deadline = now + std::chrono::milliseconds(worker.backoff_ms);
    worker.backoff_ms = std::min(worker.backoff_ms * 2, options_.restart_backoff_max_ms);
    LOG(WARNING) << "worker " << worker.name << ": " << worker.last_exit;
    return;
  }
  worker.child.emplace(std::move(child).value());
  worker.spawn_id = next_spawn_id_++;
  worker.state = WorkerState::kStarting;
  worker.deadline = now + std::chrono::milliseconds(options_.health_timeout_ms);
}

void SupervisorCore::ReadOutput(Worker& worker, Clock::time_point now) {
  if (!worker.child) return;
  ReadStream(worker, /*is_stdout=*/true, now);
  ReadStream(worker, /*is_stdout=*/false, now);
}

void SupervisorCore::ReadStream(Worker& worker, bool is_stdout, Clock::time_point now) {
  LineSplitter& lines = is_stdout ? worker.stdout_lines : worker.stderr_lines;
  auto on_line = [&](std::string_view line) { OnLine(worker, is_stdout, line, now); };
  char buffer[16 << 10];
  for (size_t num_total = 0; num_total < kMaxReadPerRoundBytes;) {
    const int fd = is_stdout ? worker.child->stdout_fd() : worker.child->stderr_fd();
    if (fd < 0) return;
    const ssize_t num_read = read(fd, buffer, sizeof buffer);
    if (num_read < 0 && errno == EINTR) continue;
    if (num_read < 0) return;  // EAGAIN: nothing more now
    if (num_read == 0) {
      lines.Flush(on_line);
      is_stdout ? worker.child->CloseStdout() : worker.child->CloseStderr();
      return;
    }
    lines.Feed(std::string_view(buffer, static_cast<size_t>(num_read)), on_line);
    num_total += static_cast<size_t>(num_read);
  }
}

void SupervisorCore::OnLine(Worker& worker, bool is_stdout, std::string_view line, Clock::time_point now) {
  WriteLine(worker, line);
  if (!line.empty()) worker.last_output_line = std::string(line.substr(0, kMaxLastLineBytes));
  if (!is_stdout || !worker.url.empty() || worker.state != WorkerState::kStarting) return;
  if (std::optional<std::string> url = ParseReadyUrl(line)) {
    worker.url = *url;
    worker.next_health_at = now;
  }
}

void SupervisorCore::WriteLine(const Worker& worker, std::string_view line) const {
  const std::string pid = worker.child ? std::to_string(worker.child->pid()) : "-";
  if (worker.log_fd >= 0) {
    WriteAll(worker.log_fd, std::string(line) + "\n");
    return;
  }
  // One write per line, so that lines of different workers do not interleave.
  WriteAll(STDERR_FILENO, "[worker " + worker.name + " pid " + pid + "] " + std::string(line) + "\n");
}

void SupervisorCore::ReapExited(Clock::time_point now, std::vector<WorkerEvent>& events) {
  for (auto& worker : workers_) {
    if (!worker->child) continue;
    if (std::optional<int> wait_status = worker->child->Reap()) OnExit(*worker, *wait_status, now, events);
  }
}

void SupervisorCore::OnExit(Worker& worker, int wait_status, Clock::time_point now, std::vector<WorkerEvent>& events) {
  ReadOutput(worker, now);  // what it wrote just before it died
  worker.stdout_lines.Flush([&](std::string_view line) { OnLine(worker, true, line, now); });
  worker.stderr_lines.Flush([&](std::string_view line) { OnLine(worker, false, line, now); });
  const pid_t pid = worker.child->pid();
  worker.last_exit = worker.kill_reason.empty() ? DescribeWaitStatus(wait_status) : worker.kill_reason;
  WriteLine(worker, worker.last_exit);
  worker.child.reset();
  if (worker.state == WorkerState::kUp) events.push_back({WorkerEvent::kDown, worker.pool, worker.name, worker.url, pid});
  if (worker.retiring) {
    worker.remove = true;
    return;
  }
  if (!worker.ever_up) worker.failed_before_up = true;
  if (worker.state == WorkerState::kUp && MsBetween(worker.up_at, now) >= options_.backoff_reset_after_ms) {
    worker.backoff_ms = options_.restart_backoff_initial_ms;
  }
  worker.state = WorkerState::kBackoff;
  worker.deadline = now + std::chrono::milliseconds(worker.backoff_ms);
  LOG(WARNING) << "worker " << worker.name << " (pid " << pid << ") " << worker.last_exit << "; restarting in "
               << worker.backoff_ms << " ms";
  worker.backoff_ms = std::min(worker.backoff_ms * 2, options_.restart_backoff_max_ms);
}

void SupervisorCore::HandleHealth(Clock::time_point now, std::vector<WorkerEvent>& events) {
  for (const HealthInbox::Result& result : inbox_->TakeAll()) {
    auto found = std::find_if(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& worker) {
      return worker->spawn_id == result.spawn_id && worker->child;
    });
    if (found == workers_.end()) continue;
    Worker& worker = **found;
    worker.health_in_flight = false;
    if (worker.state != WorkerState::kStarting) continue;
    if (!result.healthy) {
      worker.next_health_at = now + std::chrono::milliseconds(kHealthRetryMs);
      continue;
    }
    worker.state = WorkerState::kUp;
    worker.ever_up = true;
    worker.up_at = now;
    worker.deadline = Clock::time_point::max();
    events.push_back({WorkerEvent::kUp, worker.pool, worker.name, worker.url, worker.child->pid()});
  }
}

void SupervisorCore::RunTimers(Clock::time_point now) {
  for (auto& worker : workers_) {
    if (worker->remove) continue;  // retired in back-off this round: must not respawn
    const bool due = now >= worker->deadline;
    switch (worker->state) {
      case WorkerState::kBackoff:
        if (due) Spawn(*worker, now);
        break;
      case WorkerState::kStarting:
        if (due) {
          worker->kill_reason = "no /health 200 within " + std::to_string(options_.health_timeout_ms) + " ms";
          worker->child->KillGroup();
          worker->deadline = Clock::time_point::max();
        } else if (!worker->url.empty() && !worker->health_in_flight && now >= worker->next_health_at) {
          SendHealthCheck(*worker);
        }
        break;
      case WorkerState::kStopping:
        if (due && !worker->term_pending) {
          worker->child->KillGroup();
          worker->deadline = Clock::time_point::max();
        }
        break;
      case WorkerState::kUp:
        break;
    }
  }
}

void SupervisorCore::SendHealthCheck(Worker& worker) {
  worker.health_in_flight = true;
  net::ClientRequest request;
  request.url = worker.url + "/health";
  request.timeout_ms = kHealthRequestTimeoutMs;
  std::shared_ptr<HealthInbox> inbox = inbox_;
  const int64_t spawn_id = worker.spawn_id;
  net::ClientCallbacks callbacks;
  callbacks.on_done = [inbox, spawn_id](net::ClientResult result) {
    inbox->Push({spawn_id, result.status.ok() && result.response.status == 200});
  };
  client_->Send(std::move(request), std::move(callbacks));
}

}  // namespace surge::router::internal
