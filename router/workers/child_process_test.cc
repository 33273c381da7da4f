// ChildProcess against /bin/sh, and the ready-line and line parsers: exec failures come back
// as a Status, output and exit statuses arrive, and a child is told to stop (SIGTERM) when
// the thread that spawned it exits.
#include "router/workers/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace surge::router {
namespace {

// Reads fd to EOF (it is non-blocking: waits with poll).
std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    pollfd entry{fd, POLLIN, 0};
    if (poll(&entry, 1, 5'000) <= 0) return text + "<timeout>";
    const ssize_t num_read = read(fd, buffer, sizeof buffer);
    if (num_read == 0) return text;
    if (num_read > 0) text.append(buffer, static_cast<size_t>(num_read));
  }
}

// Reaps the child, waiting up to 5 s.
std::optional<int> ReapWithin5s(ChildProcess& child) {
  for (int i = 0; i < 500; ++i) {
    if (std::optional<int> status = child.Reap()) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

TEST(ChildProcessTest, OutputAndExitStatus) {
  auto child = ChildProcess::Spawn({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(ReadAll(child->stdout_fd()), "out\n");
  EXPECT_EQ(ReadAll(child->stderr_fd()), "err\n");
  std::optional<int> status = ReapWithin5s(*child);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeWaitStatus(*status), "exited with code 3");
  EXPECT_FALSE(child->Reap().has_value()) << "reaped twice";
}

TEST(ChildProcessTest, ExecFailureIsAStatus) {
  auto child = ChildProcess::Spawn({"/nonexistent/surge", "serve"});
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("/nonexistent/surge"), std::string::npos) << child.status().message();
  EXPECT_NE(child.status().message().find("No such file"), std::string::npos) << child.status().message();
}

TEST(ChildProcessTest, NoInheritedDescriptors) {
  // Not close-on-exec, and high enough not to be one that ls opens itself.
  const int leaked = fcntl(STDERR_FILENO, F_DUPFD, 100);
  ASSERT_GE(leaked, 100);
  auto child = ChildProcess::Spawn({"/bin/ls", "/proc/self/fd"});
  ASSERT_TRUE(child.ok());
  const std::string fds = ReadAll(child->stdout_fd());
  EXPECT_EQ(fds.find("\n" + std::to_string(leaked) + "\n"), std::string::npos) << fds;
  EXPECT_NE(fds.find("\n2\n"), std::string::npos) << fds;
  ASSERT_TRUE(ReapWithin5s(*child).has_value());
  close(leaked);
}

// Ignored: only SIGPIPE (bit 13 of SigIgn); blocked: nothing, whatever the parent blocks.
TEST(ChildProcessTest, SignalsResetExceptSigpipeIgnored) {
  sigset_t blocked, old;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &blocked, &old);
  auto child = ChildProcess::Spawn({"/bin/grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(child.ok());
  const std::string status = ReadAll(child->stdout_fd());
  EXPECT_NE(status.find("SigBlk:\t0000000000000000"), std::string::npos) << status;
  // Signals 32 .. SIGRTMIN-1 are glibc's own (thread cancellation, setxid): sigaction cannot
  // change them, so an ignored disposition the test runner passed down stays; the rest must
  // be default but SIGPIPE.
  const size_t at = status.find("SigIgn:\t");
  ASSERT_NE(at, std::string::npos) << status;
  uint64_t ignored = std::stoull(status.substr(at + 8, 16), nullptr, 16);
  for (int reserved = 32; reserved < SIGRTMIN; ++reserved) ignored &= ~(uint64_t{1} << (reserved - 1));
  EXPECT_EQ(ignored, uint64_t{1} << (SIGPIPE - 1)) << status;
  ASSERT_TRUE(ReapWithin5s(*child).has_value());
}

TEST(ChildProcessTest, KilledBySignal) {
  auto child = ChildProcess::Spawn({"/bin/sleep", "30"});
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(getpgid(child->pid()), child->pid()) << "not in a process group of its own";
  child->Signal(SIGKILL);
  std::optional<int> status = ReapWithin5s(*child);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeWaitStatus(*status).rfind("killed by signal 9", 0), 0u) << DescribeWaitStatus(*status);
}

TEST(ChildProcessTest, KillGroupTakesGrandchildren) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // the orphaned grandchild is ours to reap
  auto child = ChildProcess::Spawn({"/bin/sh", "-c", "sleep 30 & echo $!; wait"});
  ASSERT_TRUE(child.ok());
  char line[64] = {};
  pollfd entry{child->stdout_fd(), POLLIN, 0};
  ASSERT_EQ(poll(&entry, 1, 5'000), 1);
  ASSERT_GT(read(child->stdout_fd(), line, sizeof line - 1), 0);
  const pid_t grandchild = std::atoi(line);
  ASSERT_GT(grandchild, 0);
  child->KillGroup();
  ASSERT_TRUE(ReapWithin5s(*child).has_value());
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = waitpid(grandchild, nullptr, WNOHANG) == grandchild;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived";
}

// PR_SET_PDEATHSIG: the spawning thread exits, the child gets SIGTERM. This is what
// makes a kill -9 of the router stop its workers.
TEST(ChildProcessTest, ParentThreadExitSendsSigterm) {
  std::optional<ChildProcess> child;
  std::thread spawner([&] {
    auto spawned = ChildProcess::Spawn({"/bin/sleep", "30"});
    if (spawned.ok()) child.emplace(std::move(spawned).value());
  });
  spawner.join();
  ASSERT_TRUE(child.has_value());
  std::optional<int> status = ReapWithin5s(*child);
  ASSERT_TRUE(status.has_value()) << "child still running after its parent thread exited";
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM) << DescribeWaitStatus(*status);
}

TEST(ReadyLineTest, ParsesServeReadyLine) {
  EXPECT_EQ(ParseReadyUrl("surge serve: ready on http://127.0.0.1:41234 (model stories260K) -- try: curl "
                          "http://127.0.0.1:41234/v1/completions"),
            "http://127.0.0.1:41234");
  EXPECT_EQ(ParseReadyUrl("surge serve: ready on http://[::1]:8000 (model m)"), "http://[::1]:8000");
  EXPECT_EQ(ParseReadyUrl("surge serve: ready on http://localhost:65535"), "http://localhost:65535");
  EXPECT_EQ(ParseReadyUrl("surge serve: ready on http://127.0.0.1:8000\r"), "http://127.0.0.1:8000");
}

TEST(ReadyLineTest, RefusesOtherLines) {
  for (const char* line : {"", "surge serve: ready on ", "loading model... ready on http://127.0.0.1:80",
                           "x surge serve: ready on http://127.0.0.1:80", "surge serve: ready on http://127.0.0.1",
                           "surge serve: ready on http://127.0.0.1:0", "surge serve: ready on http://127.0.0.1:65536",
                           "surge serve: ready on http://127.0.0.1:80x", "surge serve: ready on http://127.0.0.1:",
                           "surge serve: ready on http://:80", "surge serve: ready on http://[::1:80",
                           "surge serve: ready on http://a/b:80", "surge serve: ready on http://u@h:80",
                           "surge serve: ready on https://127.0.0.1:80", "surge serve: ready on http://h:0000080"}) {
    EXPECT_FALSE(ParseReadyUrl(line).has_value()) << line;
  }
}

TEST(LineSplitterTest, JoinsPiecesAndBoundsLongLines) {
  LineSplitter splitter(8);
  std::vector<std::string> lines;
  auto on_line = [&](std::string_view line) { lines.emplace_back(line); };
  splitter.Feed("ab", on_line);
  splitter.Feed("c\r\nde\n\nf", on_line);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "de", ""}));
  splitter.Feed("0123456789abcdefg\nxy", on_line);  // "f0123456" is 8 bytes: cut
  splitter.Flush(on_line);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "de", "", "f0123456", "789abcde", "fg", "xy"}));
}

}  // namespace
}  // namespace surge::router
