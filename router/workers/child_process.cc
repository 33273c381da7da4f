#include "router/workers/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <utility>

namespace surge::router {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

[[noreturn]] void ReportAndExit(int status_fd) {
  const int error = errno;
  ssize_t ignored = write(status_fd, &error, sizeof error);
  (void)ignored;
  _exit(127);
}

// The child's side of Spawn, between fork and exec: async-signal-safe calls only (no
// allocation, no locks: another thread of the parent may have held them at fork). Any
// failure goes back through status_fd as an errno, then _exit.
[[noreturn]] void ExecChild(char* const* argv, pid_t parent, int stdin_fd, int stdout_fd, int stderr_fd,
                            int status_fd) {
  auto fail = [status_fd]() { ReportAndExit(status_fd); };
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) fail();
  // The parent may have died before prctl took effect: then nobody would ever stop us.
  if (getppid() != parent) _exit(127);
  if (setpgid(0, 0) != 0) fail();
  if (dup2(stdin_fd, STDIN_FILENO) < 0 || dup2(stdout_fd, STDOUT_FILENO) < 0 || dup2(stderr_fd, STDERR_FILENO) < 0) {
    fail();
  }
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    sigaction(signal_number, &default_action, nullptr);  // EINVAL for SIGKILL/SIGSTOP: fine
  }
  // Ignored dispositions survive exec: with SIGPIPE ignored, a worker whose output pipe has
  // lost its reader (the router died) gets EPIPE on a log write and still drains cleanly.
  struct sigaction ignore_action = default_action;
  ignore_action.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore_action, nullptr);
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  // Every other descriptor of the parent (sockets, other workers' pipes) closes at exec;
  // status_fd is close-on-exec already, so EOF on it tells the parent exec succeeded.
  syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
  execv(argv[0], argv);
  ReportAndExit(status_fd);
}

// The descriptors of one spawn; whatever is still owned here is closed at the end.
struct SpawnFds {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int status[2] = {-1, -1};
  int null_fd = -1;

  Status Open() {
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
      return InternalError(std::string("pipe2: ") + std::strerror(errno));
    }
    null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) return InternalError(std::string("/dev/null: ") + std::strerror(errno));
    return OkStatus();
  }
  void CloseChildEnds() {
    for (int* fd : {&out[1], &err[1], &status[1], &null_fd}) CloseFd(*fd);
  }
  ~SpawnFds() {
    CloseChildEnds();
    for (int* fd : {&out[0], &err[0], &status[0]}) CloseFd(*fd);
  }
};

// Waits for the child's exec: EOF on the status pipe means it ran, an int is its errno.
Status AwaitExec(int status_fd, pid_t pid, const std::string& path) {
  int error = 0;
  ssize_t num_read;
  do {
    num_read = read(status_fd, &error, sizeof error);
  } while (num_read < 0 && errno == EINTR);
  if (num_read == 0) return OkStatus();
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (num_read != sizeof error) return InternalError("cannot start " + path + ": lost its exec status");
  return UnavailableError("cannot run " + path + ": " + std::strerror(error));
}

}  // namespace

StatusOr<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return InvalidArgumentError("no program to run");
  std::vector<std::string> args = argv;  // the child may not allocate: argv is built here
  std::vector<char*> raw_args;
  for (std::string& arg : args) raw_args.push_back(arg.data());
  raw_args.push_back(nullptr);
  SpawnFds fds;
  RETURN_IF_ERROR(fds.Open());
  const pid_t parent = getpid();
  // Signals stay blocked across fork so that no handler of the parent runs in the child
  // before ExecChild resets them.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) ExecChild(raw_args.data(), parent, fds.null_fd, fds.out[1], fds.err[1], fds.status[1]);
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  fds.CloseChildEnds();
  if (pid < 0) return InternalError(std::string("fork: ") + std::strerror(fork_errno));
  RETURN_IF_ERROR(AwaitExec(fds.status[0], pid, argv[0]));
  ChildProcess child;
  child.pid_ = pid;
  child.stdout_fd_ = std::exchange(fds.out[0], -1);
  child.stderr_fd_ = std::exchange(fds.err[0], -1);
  fcntl(child.stdout_fd_, F_SETFL, O_NONBLOCK);
  fcntl(child.stderr_fd_, F_SETFL, O_NONBLOCK);
  child.pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // -1 on old kernels
  if (child.pidfd_ >= 0) fcntl(child.pidfd_, F_SETFD, FD_CLOEXEC);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this == &other) return *this;
  CloseAll();
  pid_ = std::exchange(other.pid_, -1);
  stdout_fd_ = std::exchange(other.stdout_fd_, -1);
  stderr_fd_ = std::exchange(other.stderr_fd_, -1);
  pidfd_ = std::exchange(other.pidfd_, -1);
  reaped_ = std::exchange(other.reaped_, false);
  return *this;
}

ChildProcess::~ChildProcess() { CloseAll(); }

void ChildProcess::CloseAll() {
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  CloseFd(pidfd_);
}

void ChildProcess::CloseStdout() { CloseFd(stdout_fd_); }
void ChildProcess::CloseStderr() { CloseFd(stderr_fd_); }

void ChildProcess::Signal(int signal) {
  if (pid_ > 0 && !reaped_) kill(pid_, signal);
}

// The group id is the child's pid, which cannot be reused before the child is reaped.
void ChildProcess::KillGroup() {
  if (pid_ > 0 && !reaped_) kill(-pid_, SIGKILL);
}

std::optional<int> ChildProcess::Reap() {
  if (pid_ <= 0 || reaped_) return std::nullopt;
  int wait_status = 0;
  pid_t done;
  do {
    done = waitpid(pid_, &wait_status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == 0) return std::nullopt;
  reaped_ = true;
  CloseFd(pidfd_);
  // done < 0 (ECHILD): someone else reaped it, against the contract; report it as gone.
  return done == pid_ ? wait_status : 0;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signal_number = WTERMSIG(wait_status);
    const char* name = strsignal(signal_number);
    return "killed by signal " + std::to_string(signal_number) + (name != nullptr ? std::string(" (") + name + ")" : "");
  }
  return "ended with wait status " + std::to_string(wait_status);
}

std::optional<std::string> ParseReadyUrl(std::string_view line) {
  constexpr std::string_view kPrefix = "surge serve: ready on http://";
  if (line.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = line.substr(kPrefix.size());
  rest = rest.substr(0, rest.find_first_of(" \t\r"));
  size_t host_end;
  if (!rest.empty() && rest[0] == '[') {
    host_end = rest.find(']');
    if (host_end == std::string_view::npos || host_end < 2) return std::nullopt;
    ++host_end;
  } else {
    host_end = rest.rfind(':');
    if (host_end == std::string_view::npos || host_end == 0) return std::nullopt;
  }
  const std::string_view host = rest.substr(0, host_end);
  if (host.find_first_of("/?#@") != std::string_view::npos) return std::nullopt;
  if (host_end >= rest.size() || rest[host_end] != ':') return std::nullopt;
  const std::string_view port = rest.substr(host_end + 1);
  if (port.empty() || port.size() > 5) return std::nullopt;
  int32_t value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return std::nullopt;
  return "http://" + std::string(rest);
}

void LineSplitter::Feed(std::string_view data, const std::function<void(std::string_view)>& on_line) {
  while (!data.empty()) {
    const size_t newline = data.find('\n');
    const size_t room = max_line_bytes_ - partial_.size();
    if (newline == std::string_view::npos || newline > room) {
      const size_t take = std::min(data.size(), room);
      partial_.append(data.substr(0, take));
      data.remove_prefix(take);
      if (partial_.size() == max_line_bytes_) Flush(on_line);
      continue;
    }
    partial_.append(data.substr(0, newline));
    data.remove_prefix(newline + 1);
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    on_line(partial_);
    partial_.clear();
  }
}

void LineSplitter::Flush(const std::function<void(std::string_view)>& on_line) {
  if (partial_.empty()) return;
  on_line(partial_);
  partial_.clear();
}

}  // namespace surge::router
