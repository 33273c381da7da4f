// WorkerSupervisor: the local `surge serve` workers of `surge route --spawn` — starts them on
// free ports, reports when each is up (GET /health 200) and down, restarts a crashed one with
// back-off, resizes pools, and stops them all (README.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge::router {

inline constexpr int32_t kMaxWorkersPerPool = 256;

// One pool's workers: `surge_binary serve model_path --host H --port 0 engine_args...`.
struct WorkerSpec {
  std::string pool;  // the pool the workers join; worker names are "<pool>-<index>"
  int32_t num_workers = 1;
  std::string surge_binary;  // the surge executable: the router's own, /proc/self/exe
  std::string model_path;
  std::vector<std::string> engine_args;  // e.g. {"--threads", "1"}; not --host, --port, --model
};

struct SupervisorOptions {
  // From spawn to GET /health 200; a worker slower than this is killed and restarted.
  int64_t health_timeout_ms = 120'000;
  // Restart delays: initial, doubled after each failure up to max; back to initial once a
  // worker has stayed up for backoff_reset_after_ms.
  int64_t restart_backoff_initial_ms = 500;
  int64_t restart_backoff_max_ms = 30'000;
  int64_t backoff_reset_after_ms = 30'000;
  // SIGTERM (surge serve drains, for its --drain-timeout, default 30 s), then SIGKILL after
  // this. Keep it above the workers' drain timeout or the drain is cut short.
  int64_t stop_timeout_ms = 35'000;
  std::string host = "127.0.0.1";  // the workers' --host
  // Empty: worker output goes to this process's stderr, each line prefixed with
  // "[worker NAME pid N] ". Otherwise: appended to LOG_DIR/NAME.log (created if missing).
  std::string log_dir;
};

enum class WorkerState {
  kStarting,  // spawned, waiting for its ready line and /health 200
  kUp,        // serving at url
  kStopping,  // SIGTERM sent (resize down or Stop): draining, then reaped and removed
  kBackoff,   // exited; restarts when its back-off delay has passed
};
std::string_view WorkerStateName(WorkerState state);

struct WorkerInfo {
  std::string pool;
  std::string name;  // "<pool>-<index>", stable across restarts
  std::string url;   // "http://127.0.0.1:PORT" once known, else empty
  int32_t pid = -1;  // -1 while in back-off
  WorkerState state = WorkerState::kStarting;
  int32_t num_restarts = 0;
  std::string last_exit;         // "exited with code 2", "no /health 200 within 500 ms", ...
  std::string last_output_line;  // the worker's last line on stdout/stderr (why it failed)
  // Of num_restarts, those Restart() asked for; the rest are exits nobody asked for.
  int32_t num_requested_restarts = 0;
  bool restarting_on_request = false;  // from Restart() until the replacement process starts
};

// kUp: `url` now serves (route to it). kDown: stop routing to `url` — the worker exited,
// or it is about to be sent SIGTERM (resize down, Stop). A kDown always follows a kUp of
// the same url; a worker that dies before it was up produces no event.
struct WorkerEvent {
  enum Kind { kUp, kDown } kind;
  std::string pool;
  std::string name;
  std::string url;
  int32_t pid = -1;
};

namespace internal {
class SupervisorCore;
}  // namespace internal

// Thread-safe. All spawning, health checking, reaping and restarting happen on one thread
// of its own, which also delivers the events, in order, with no lock held. on_event must
// return promptly; it may call workers() and Resize(), not Stop().
class WorkerSupervisor {
 public:
  using EventCallback = std::function<void(const WorkerEvent&)>;

  // Checks the specs and options (INVALID_ARGUMENT naming the field) and starts the
  // workers; returns at once — WaitUntilUp waits for them.
  static StatusOr<std::unique_ptr<WorkerSupervisor>> Start(std::vector<WorkerSpec> specs, SupervisorOptions options,
                                                           EventCallback on_event);
  ~WorkerSupervisor();  // Stop()
  WorkerSupervisor(const WorkerSupervisor&) = delete;
  WorkerSupervisor& operator=(const WorkerSupervisor&) = delete;

  // OK once every wanted worker is up. UNAVAILABLE at once when a worker exits before its
  // first kUp (a bad engine flag or model: waiting would not help at start-up), naming it,
  // its exit and its last output line; DEADLINE_EXCEEDED after timeout_ms. The supervisor
  // keeps retrying either way.
  Status WaitUntilUp(int64_t timeout_ms);

  std::vector<WorkerInfo> workers() const;

  // Sets a pool's worker count (0..kMaxWorkersPerPool). Up: new workers start (kUp when
  // healthy). Down: the newest workers (highest index) get kDown, then SIGTERM, and are
  // removed once they exit. Returns at once; NOT_FOUND for an unknown pool.
  Status Resize(const std::string& pool, int32_t num_workers);
  // Stops this one worker for good and lowers its pool's count by one: kDown, SIGTERM, removed
  // once it exits (at once when in back-off). Capacity classes pick which replica goes, not
  // the newest. NOT_FOUND when no worker of that name runs or restarts.
  Status Retire(const std::string& name);

  // Restarts one worker, named by its url or its name: kDown, SIGTERM (it drains), and once
  // it exits the usual restart (back-off, spawn, kUp at its new url). Returns at once;
  // NOT_FOUND when no running worker has that url or name (UNAVAILABLE while it
  // is already stopping or restarting).
  Status Restart(const std::string& url_or_name);

  // kDown for every up worker, SIGTERM to all, SIGKILL to those still running after
  // stop_timeout_ms, all reaped before it returns. Idempotent.
  void Stop();

 private:
  explicit WorkerSupervisor(std::unique_ptr<internal::SupervisorCore> core);
  std::unique_ptr<internal::SupervisorCore> core_;
};

}  // namespace surge::router
