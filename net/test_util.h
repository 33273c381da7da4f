// Test helpers for net/: a raw blocking TCP client and a scripted fake server, on POSIX
// sockets, to send bytes no well-behaved client would and to misbehave as a server.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace surge::net::testing {

// One blocking connection to 127.0.0.1 (or ::1).
class RawConnection {
 public:
  // CHECK-fails when the connect fails: tests only connect to servers they started.
  explicit RawConnection(uint16_t port, bool ipv6 = false);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool Send(std::string_view bytes);
  // Everything received until the peer closes or `timeout_ms` passes.
  std::string ReadUntilClose(int timeout_ms = 3000);
  // Reads until `marker` has arrived (returns all bytes so far) or the timeout passes.
  std::string ReadUntil(std::string_view marker, int timeout_ms = 3000);
  // True when the peer closes within `timeout_ms` (bytes that arrive are discarded).
  bool WaitForClose(int timeout_ms);
  void Close();
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string received_;
};

// Listens on 127.0.0.1:0 and runs `script` on each accepted connection, one at a time,
// on its own thread; the script owns the fd until it returns (then it is closed).
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int fd)> script);
  ~FakeServer();
  uint16_t port() const { return port_; }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Helpers for FakeServer scripts.
std::string ReadRequestHead(int fd, int timeout_ms = 3000);  // up to and including "\r\n\r\n"
void WriteAll(int fd, std::string_view bytes);

// A local port with nothing listening (bound, then released).
uint16_t UnusedPort();
// Raises the soft RLIMIT_NOFILE to at least `num_files`; false when the hard limit is lower.
bool RaiseFileLimit(uint64_t num_files);
// True when ::1 can be bound here.
bool HasIpv6Loopback();

}  // namespace surge::net::testing
