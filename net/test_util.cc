#include "net/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "base/check.h"

namespace surge::net::testing {
namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for input; returns bytes read, 0 on EOF, -1 on timeout or error.
ssize_t ReadSome(int fd, char* buffer, size_t size, int timeout_ms) {
  pollfd pfd{fd, POLLIN, 0};
  if (poll(&pfd, 1, timeout_ms) <= 0) return -1;
  ssize_t n = recv(fd, buffer, size, 0);
  return n < 0 ? -1 : n;
}

}  // namespace

RawConnection::RawConnection(uint16_t port, bool ipv6) {
  fd_ = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  CHECK_GE(fd_, 0);
  int rc;
  if (ipv6) {
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_port = htons(port);
    address.sin6_addr = in6addr_loopback;
    rc = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  } else {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  CHECK_EQ(rc, 0) << "connect to port " << port << ": " << std::strerror(errno);
}

RawConnection::~RawConnection() { Close(); }

void RawConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool RawConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(n);
  }
  return true;
}

std::string RawConnection::ReadUntilClose(int timeout_ms) {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  char buffer[16384];
  while (true) {
    ssize_t n = ReadSome(fd_, buffer, sizeof(buffer), RemainingMs(deadline));
    if (n <= 0) break;
    received_.append(buffer, n);
  }
  return std::move(received_);
}

std::string RawConnection::ReadUntil(std::string_view marker, int timeout_ms) {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  char buffer[16384];
  while (received_.find(marker) == std::string::npos) {
    ssize_t n = ReadSome(fd_, buffer, sizeof(buffer), RemainingMs(deadline));
    if (n <= 0) break;
    received_.append(buffer, n);
  }
  return received_;
}

bool RawConnection::WaitForClose(int timeout_ms) {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  char buffer[16384];
  while (true) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, RemainingMs(deadline)) <= 0) return false;
    ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return true;  // EOF or reset
  }
}

FakeServer::FakeServer(std::function<void(int fd)> script) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  CHECK_GE(listen_fd_, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  CHECK_EQ(listen(listen_fd_, 64), 0);
  socklen_t length = sizeof(address);
  CHECK_EQ(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length), 0);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this, script = std::move(script)] {
    while (!stop_.load()) {
      pollfd pfd{listen_fd_, POLLIN, 0};
      if (poll(&pfd, 1, 20) <= 0) continue;
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      script(fd);
      close(fd);
    }
  });
}

FakeServer::~FakeServer() {
  stop_.store(true);
  thread_.join();
  close(listen_fd_);
}

std::string ReadRequestHead(int fd, int timeout_ms) {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string head;
  char byte;
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (ReadSome(fd, &byte, 1, RemainingMs(deadline)) <= 0) break;
    head.push_back(byte);
  }
  return head;
}

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(n);
  }
}

uint16_t UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  CHECK_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  close(fd);
  return ntohs(address.sin_port);
}

bool RaiseFileLimit(uint64_t num_files) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur >= num_files) return true;
  if (limit.rlim_max < num_files) return false;
  limit.rlim_cur = num_files;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

bool HasIpv6Loopback() {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

}  // namespace surge::net::testing
