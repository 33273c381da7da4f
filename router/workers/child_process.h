// ChildProcess: one spawned worker process (fork + exec, tied to its parent's life), its
// output pipes, and the small parsers the supervisor reads that output with.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::router {

// A running child. The pipes and the pidfd are owned (closed by the destructor); the
// process itself is not: whoever owns the ChildProcess kills and reaps it (Reap), so that
// exactly one thread ever calls waitpid on it.
class ChildProcess {
 public:
  // Runs argv[0] (a path, not searched in PATH) with argv. The child gets stdin from
  // /dev/null, its stdout and stderr into two pipes, default signal dispositions (but
  // SIGPIPE ignored, so that losing the reader of its output does not kill it), an empty
  // signal mask, a process group of its own (so a terminal's Ctrl-C reaches the parent,
  // which stops its workers in order) and PR_SET_PDEATHSIG SIGTERM: it is told to stop
  // when the *thread* that spawned it exits, which covers a kill -9 of the parent. Between
  // fork and exec it calls only async-signal-safe functions. An exec failure (no such
  // file, not executable) is reported here, not as an exit status.
  static StatusOr<ChildProcess> Spawn(const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Readable ends of the child's stdout and stderr (non-blocking); -1 once closed.
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  // Readable (POLLIN) when the child has exited; -1 where pidfd_open is unavailable, and
  // then the owner polls Reap on a timer.
  int pidfd() const { return pidfd_; }
  void CloseStdout();
  void CloseStderr();

  // Sends `signal` unless the child was already reaped (its pid may belong to another
  // process by then).
  void Signal(int signal);
  // SIGKILL to the child's whole process group, so that anything it started dies with it.
  void KillGroup();
  // waitpid(WNOHANG): the raw wait status once the child has exited, else nullopt.
  std::optional<int> Reap();
  bool reaped() const { return reaped_; }

 private:
  ChildProcess() = default;
  void CloseAll();

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
};

// "exited with code 2", "killed by signal 9 (Killed)": a wait status for messages.
std::string DescribeWaitStatus(int wait_status);

// The URL of `surge serve`'s ready line ("surge serve: ready on http://127.0.0.1:41234
// (model ...) ..."), checked: http://, a host (an IPv6 one in brackets), a port in
// [1, 65535], nothing else before the next space. nullopt for any other line, so that a
// log line that merely mentions "ready on" is not taken for it.
std::optional<std::string> ParseReadyUrl(std::string_view line);

// Splits a byte stream into lines for a per-line prefix. A line longer than
// max_line_bytes is passed on in pieces of that size, so a child that never writes a
// newline cannot make the parent buffer without bound.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line_bytes = 16 << 10) : max_line_bytes_(max_line_bytes) {}
  // Calls on_line for every complete line in buffered + data, without its '\n' (or '\r\n').
  void Feed(std::string_view data, const std::function<void(std::string_view line)>& on_line);
  // Passes on a last line that had no newline (at end of stream).
  void Flush(const std::function<void(std::string_view line)>& on_line);

 private:
  size_t max_line_bytes_;
  std::string partial_;
};

}  // namespace surge::router
