#include "router/workers/worker_supervisor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "router/workers/supervisor_core.h"

namespace surge::router {
namespace {

// The supervisor sets these itself; a second value would be ambiguous.
constexpr std::string_view kReservedEngineFlags[] = {"--host", "--port", "--model"};

bool IsReservedFlag(const std::string& arg) {
  for (std::string_view flag : kReservedEngineFlags) {
    if (arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0) return true;
  }
  return false;
}

Status CheckSpec(const WorkerSpec& spec) {
  const std::string where = "pool '" + spec.pool + "': ";
  if (spec.pool.empty()) return InvalidArgumentError("worker pool: empty name");
  if (spec.pool.find_first_of("/ \t\n") != std::string::npos) {
    return InvalidArgumentError(where + "name must not contain '/' or spaces (it names log files)");
  }
  if (spec.num_workers < 0 || spec.num_workers > kMaxWorkersPerPool) {
    return InvalidArgumentError(where + "spawn must be in [0, " + std::to_string(kMaxWorkersPerPool) + "]");
  }
  if (spec.surge_binary.empty() || access(spec.surge_binary.c_str(), X_OK) != 0) {
    return InvalidArgumentError(where + "cannot execute surge binary '" + spec.surge_binary + "'");
  }
  if (spec.model_path.empty()) return InvalidArgumentError(where + "no model");
  for (const std::string& arg : spec.engine_args) {
    if (IsReservedFlag(arg)) return InvalidArgumentError(where + "engine flag " + arg + " is set by the router");
  }
  return OkStatus();
}

Status CheckOptions(const SupervisorOptions& options) {
  if (options.health_timeout_ms <= 0) return InvalidArgumentError("health timeout must be > 0 ms");
  if (options.restart_backoff_initial_ms <= 0) return InvalidArgumentError("restart back-off must be > 0 ms");
  if (options.restart_backoff_max_ms < options.restart_backoff_initial_ms) {
    return InvalidArgumentError("restart back-off max must be >= its initial value");
  }
  if (options.backoff_reset_after_ms < 0) return InvalidArgumentError("back-off reset time must be >= 0 ms");
  if (options.stop_timeout_ms < 0) return InvalidArgumentError("stop timeout must be >= 0 ms");
  if (options.host.empty()) return InvalidArgumentError("worker host: empty");
  if (!options.log_dir.empty()) {
    if (mkdir(options.log_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return InvalidArgumentError("worker log dir " + options.log_dir + ": " + std::strerror(errno));
    }
    struct stat info;
    if (stat(options.log_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return InvalidArgumentError("worker log dir " + options.log_dir + " is not a directory");
    }
  }
  return OkStatus();
}

}  // namespace

std::string_view WorkerStateName(WorkerState state) {
  switch (state) {
    case WorkerState::kStarting: return "starting";
    case WorkerState::kUp: return "up";
    case WorkerState::kStopping: return "stopping";
    case WorkerState::kBackoff: return "backoff";
  }
  return "?";
}

StatusOr<std::unique_ptr<WorkerSupervisor>> WorkerSupervisor::Start(std::vector<WorkerSpec> specs,
                                                                     SupervisorOptions options,
                                                                     EventCallback on_event) {
  std::set<std::string> names;
  for (const WorkerSpec& spec : specs) {
    RETURN_IF_ERROR(CheckSpec(spec));
    if (!names.insert(spec.pool).second) return InvalidArgumentError("pool '" + spec.pool + "' given twice");
  }
  RETURN_IF_ERROR(CheckOptions(options));
  auto core = std::make_unique<internal::SupervisorCore>(std::move(specs), std::move(options), std::move(on_event));
  core->StartThread();
  return std::unique_ptr<WorkerSupervisor>(new WorkerSupervisor(std::move(core)));
}

WorkerSupervisor::WorkerSupervisor(std::unique_ptr<internal::SupervisorCore> core) : core_(std::move(core)) {}
WorkerSupervisor::~WorkerSupervisor() { Stop(); }
Status WorkerSupervisor::WaitUntilUp(int64_t timeout_ms) { return core_->WaitUntilUp(timeout_ms); }
std::vector<WorkerInfo> WorkerSupervisor::workers() const { return core_->Snapshot(); }
Status WorkerSupervisor::Resize(const std::string& pool, int32_t num_workers) {
  return core_->Resize(pool, num_workers);
}
Status WorkerSupervisor::Retire(const std::string& name) { return core_->Retire(name); }
Status WorkerSupervisor::Restart(const std::string& url_or_name) { return core_->Restart(url_or_name); }
void WorkerSupervisor::Stop() { core_->Stop(); }

namespace internal {

Status SupervisorCore::WaitUntilUp(int64_t timeout_ms) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock lock(mu_);
  for (;;) {
    if (std::optional<Status> failure = StartupFailure()) return *failure;
    if (AllUp()) return OkStatus();
    if (stopping_) return UnavailableError("the worker supervisor was stopped");
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  if (AllUp()) return OkStatus();
  std::string waiting;
  for (const auto& worker : workers_) {
    if (worker->state != WorkerState::kUp && !worker->retiring) waiting += (waiting.empty() ? "" : "; ") + Describe(*worker);
  }
  return {StatusCode::kDeadlineExceeded,
          "workers not up within " + std::to_string(timeout_ms) + " ms: " + (waiting.empty() ? "(starting)" : waiting)};
}

bool SupervisorCore::AllUp() const {
  for (const auto& [name, pool] : pools_) {
    int32_t num_up = 0;
    for (const auto& worker : workers_) {
      if (worker->pool == name && !worker->retiring && worker->state == WorkerState::kUp) ++num_up;
    }
    if (num_up != pool.num_wanted) return false;
  }
  return true;
}

std::optional<Status> SupervisorCore::StartupFailure() const {
  for (const auto& worker : workers_) {
    if (worker->failed_before_up && !worker->ever_up && !worker->retiring) {
      return UnavailableError("worker " + Describe(*worker));
    }
  }
  return std::nullopt;
}

std::string SupervisorCore::Describe(const Worker& worker) const {
  std::string text = worker.name + " (" + std::string(WorkerStateName(worker.state)) + ")";
  if (!worker.last_exit.empty()) text += " " + worker.last_exit;
  if (!worker.last_output_line.empty()) text += ": " + worker.last_output_line;
  return text;
}

std::vector<WorkerInfo> SupervisorCore::Snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<WorkerInfo> infos;
  for (const auto& worker : workers_) {
    infos.push_back({worker->pool, worker->name, worker->url, worker->child ? worker->child->pid() : -1,
                     worker->state, std::max(worker->num_spawns - 1, 0), worker->last_exit,
                     worker->last_output_line, worker->num_requested_restarts, worker->exit_requested});
  }
  return infos;
}

Status SupervisorCore::Resize(const std::string& pool, int32_t num_workers) {
  if (num_workers < 0 || num_workers > kMaxWorkersPerPool) {
    return InvalidArgumentError("pool '" + pool + "': workers must be in [0, " + std::to_string(kMaxWorkersPerPool) +
                                "], not " + std::to_string(num_workers));
  }
  {
    std::lock_guard lock(mu_);
    auto found = pools_.find(pool);
    if (found == pools_.end()) return NotFoundError("no worker pool '" + pool + "'");
    if (stopping_) return UnavailableError("the worker supervisor was stopped");
    found->second.num_wanted = num_workers;
  }
  inbox_->Wake();
  return OkStatus();
}

Status SupervisorCore::Retire(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return UnavailableError("the worker supervisor was stopped");
    auto found = std::find_if(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& worker) {
      return worker->name == name && !worker->retiring && !worker->retire_requested;
    });
    if (found == workers_.end()) return NotFoundError("no running worker '" + name + "'");
    (*found)->retire_requested = true;
    int32_t& num_wanted = pools_.at((*found)->pool).num_wanted;
    num_wanted = std::max(num_wanted - 1, 0);
  }
  inbox_->Wake();
  return OkStatus();
}

Status SupervisorCore::Restart(const std::string& url_or_name) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return UnavailableError("the worker supervisor was stopped");
    auto found = std::find_if(workers_.begin(), workers_.end(), [&](const std::unique_ptr<Worker>& worker) {
      return !worker->retiring && (worker->name == url_or_name || (!worker->url.empty() && worker->url == url_or_name));
    });
    if (found == workers_.end()) return NotFoundError("no spawned worker '" + url_or_name + "'");
    Worker& worker = **found;
    if (!worker.child || worker.state == WorkerState::kStopping || worker.restart_requested) {
      return UnavailableError("worker " + worker.name + " is already " +
                                     (worker.child ? "restarting" : "waiting to restart"));
    }
    worker.restart_requested = true;
  }
  inbox_->Wake();
  return OkStatus();
}

}  // namespace internal
}  // namespace surge::router
