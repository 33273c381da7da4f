// ServerCore: the io_context, listener, routes and connection registry behind HttpServer.
// Shared (shared_ptr) with every connection so that it outlives the last of them. Internal.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "net/http_server.h"

namespace surge::net::internal {

class ServerConnection;

class ServerCore : public std::enable_shared_from_this<ServerCore> {
 public:
  explicit ServerCore(HttpServerOptions options);
  ~ServerCore();

  // Before Start only.
  void AddRoute(std::string method, std::string path, Handler handler, size_t max_body_bytes);
  // The body limit of the route that serves (method, path): its own, else the server's.
  size_t MaxBodyBytes(std::string_view method, std::string_view path) const;

  // Binds and listens; sets *port to the bound port and starts accepting.
  Status Listen(uint16_t* port);
  void Run();  // the io thread's body

  // Thread-safe: runs `task` on the io thread. False once BlockPosts was called, so that
  // nothing lands in a queue that no thread will run.
  bool Post(std::function<void()> task);
  // Stop() part two: refuse further posts and let io_context::run return when idle.
  void BlockPosts();
  // Runs in CloseAll, after the connections closed, on the io thread: an HttpClient on this
  // loop ends its requests there, so that the loop can run out of work. Thread-safe.
  void AddStopHook(std::function<void()> hook);

  // io thread only.
  void HandleRequest(HttpRequest request, std::shared_ptr<ResponseWriter> writer);
  void Unregister(uint64_t connection_id);
  void DrainNow();
  void CloseAll();

  boost::asio::io_context& io() { return io_; }
  const HttpServerOptions& options() const { return options_; }

  std::atomic<bool> draining{false};
  std::atomic<bool> started{false};  // Start() ran: the io thread runs (or ran) the loop
  std::atomic<int64_t> num_accepted{0};
  std::atomic<int64_t> num_open{0};
  std::atomic<int64_t> num_requests{0};

 private:
  void Accept();
  void OnAccept(const boost::system::error_code& ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context io_;  // first member: destroyed last
  const HttpServerOptions options_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_timer_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  using RouteMap = std::map<std::string, std::map<std::string, Handler>>;  // path -> method -> handler
  RouteMap::const_iterator FindRoute(const std::string& path) const;
  // "GET, OPTIONS, POST": what `path` serves, or (an unknown path) what any path serves.
  std::string AllowedMethods(RouteMap::const_iterator path) const;
  void AnswerOptions(const HttpRequest& request, ResponseWriter& writer) const;
  RouteMap routes_;
  std::map<std::pair<std::string, std::string>, size_t> route_body_limits_;  // (pattern, method) -> bytes
  std::unordered_map<uint64_t, std::weak_ptr<ServerConnection>> connections_;  // io thread
  uint64_t next_connection_id_ = 1;
  std::shared_mutex post_mu_;
  bool posts_blocked_ = false;  // guarded by post_mu_
  std::mutex stop_hooks_mu_;
  std::vector<std::function<void()>> stop_hooks_;  // guarded by stop_hooks_mu_
};

}  // namespace surge::net::internal
