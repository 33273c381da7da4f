#include "net/http_server.h"

#include <boost/asio/post.hpp>

#include <set>

#include "base/check.h"
#include "base/logging.h"
#include "net/server_connection.h"
#include "net/server_core.h"

namespace surge::net {
namespace internal {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

constexpr size_t kMaxPathInErrorBytes = 200;

StatusOr<tcp::endpoint> ResolveListenAddress(asio::io_context& io, const std::string& host,
                                             uint16_t port) {
  error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, port);
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) {
    return InvalidArgumentError("cannot resolve listen host '" + host + "': " + ec.message());
  }
  return results.begin()->endpoint();
}

}  // namespace

ServerCore::ServerCore(HttpServerOptions options)
    : options_(std::move(options)), acceptor_(io_), accept_retry_timer_(io_) {}

ServerCore::~ServerCore() = default;

void ServerCore::AddRoute(std::string method, std::string path, Handler handler, size_t max_body_bytes) {
  if (max_body_bytes > 0) route_body_limits_[{path, method}] = max_body_bytes;
  routes_[std::move(path)][std::move(method)] = std::move(handler);
}

size_t ServerCore::MaxBodyBytes(std::string_view method, std::string_view path) const {
  if (route_body_limits_.empty()) return options_.max_body_bytes;
  auto route = FindRoute(std::string(path));
  if (route == routes_.end()) return options_.max_body_bytes;
  auto limit = route_body_limits_.find({route->first, std::string(method)});
  return limit == route_body_limits_.end() ? options_.max_body_bytes : limit->second;
}

Status ServerCore::Listen(uint16_t* port) {
  ASSIGN_OR_RETURN(tcp::endpoint endpoint, ResolveListenAddress(io_, options_.host, options_.port));
  std::string where = endpoint.address().to_string() + " port " + std::to_string(endpoint.port());
  error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) return InternalError("socket for " + where + ": " + ec.message());
  acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  acceptor_.bind(endpoint, ec);
  if (ec) return UnavailableError("bind " + where + ": " + ec.message());
  // A burst of thousands of connects must not overflow the accept queue.
  acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return UnavailableError("listen on " + where + ": " + ec.message());
  *port = acceptor_.local_endpoint().port();
  work_.emplace(io_.get_executor());
  Accept();
  return OkStatus();
}

void ServerCore::Run() { io_.run(); }

bool ServerCore::Post(std::function<void()> task) {
  std::shared_lock<std::shared_mutex> lock(post_mu_);
  if (posts_blocked_) return false;
  asio::post(io_, std::move(task));
  return true;
}

void ServerCore::BlockPosts() {
  std::unique_lock<std::shared_mutex> lock(post_mu_);
  posts_blocked_ = true;
  work_.reset();
}

void ServerCore::Accept() {
  acceptor_.async_accept([self = shared_from_this()](const error_code& ec, tcp::socket socket) {
    self->OnAccept(ec, std::move(socket));
  });
}

void ServerCore::OnAccept(const error_code& ec, tcp::socket socket) {
  if (!acceptor_.is_open()) return;  // Drain or Stop closed it
  if (ec) {
    // EMFILE and friends: retrying at once would spin; wait for connections to close.
    LOG(WARNING) << "accept failed: " << ec.message();
    accept_retry_timer_.expires_after(std::chrono::milliseconds(100));
    accept_retry_timer_.async_wait([self = shared_from_this()](const error_code& timer_ec) {
      if (!timer_ec && self->acceptor_.is_open()) self->Accept();
    });
    return;
  }
  if (num_open.load() >= options_.max_connections) {
    error_code ignored;
    socket.close(ignored);
  } else {
    uint64_t id = next_connection_id_++;
    auto connection = std::make_shared<ServerConnection>(shared_from_this(), std::move(socket), id);
    connections_[id] = connection;
    num_accepted.fetch_add(1);
    num_open.fetch_add(1);
    connection->Start();
  }
  Accept();
}

// The exact route, else the longest "/*" prefix route that `path` extends.
ServerCore::RouteMap::const_iterator ServerCore::FindRoute(const std::string& path) const {
  auto exact = routes_.find(path);
  if (exact != routes_.end()) return exact;
  auto best = routes_.end();
  for (auto it = routes_.begin(); it != routes_.end(); ++it) {
    const std::string& pattern = it->first;
    if (!pattern.ends_with("/*")) continue;
    const std::string_view prefix(pattern.data(), pattern.size() - 1);
    if (path.size() > prefix.size() && path.starts_with(prefix) &&
        (best == routes_.end() || pattern.size() > best->first.size())) {
      best = it;
    }
  }
  return best;
}

std::string ServerCore::AllowedMethods(RouteMap::const_iterator path) const {
  std::set<std::string> methods = {"OPTIONS"};
  for (auto it = routes_.begin(); it != routes_.end(); ++it) {
    if (path != routes_.end() && it != path) continue;
    for (const auto& [method, handler] : it->second) methods.insert(method);
  }
  std::string list;
  for (const std::string& method : methods) list += (list.empty() ? "" : ", ") + method;
  return list;
}

// A preflight names the method it wants in Access-Control-Request-Method; the answer lists
// them all, so one cached answer covers every call to the path.
void ServerCore::AnswerOptions(const HttpRequest& request, ResponseWriter& writer) const {
  CorsPreflight answer = AnswerCorsPreflight(options_.cors, request.headers, AllowedMethods(FindRoute(request.path)));
  if (answer.status == 403) {
    const std::string origin = request.headers.Get("Origin").substr(0, kMaxPathInErrorBytes);
    writer.SendError(403, "origin " + origin + " is not allowed by this server's CORS policy");
    return;
  }
  writer.Send(answer.status, std::move(answer.headers), "");
}

void ServerCore::HandleRequest(HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
  if (options_.cors.enabled() && request.method == "OPTIONS") return AnswerOptions(request, *writer);
  auto path = FindRoute(request.path);
  if (path == routes_.end()) {
    writer->SendError(404, "no route for " + request.path.substr(0, kMaxPathInErrorBytes));
    return;
  }
  auto route = path->second.find(request.method);
  if (route == path->second.end()) {
    std::string allow;
    for (const auto& [method, handler] : path->second) allow += (allow.empty() ? "" : ", ") + method;
    std::string body = ErrorJson(405, "method " + request.method + " not allowed for " + path->first);
    writer->Send(405, {{"Content-Type", "application/json"}, {"Allow", allow}}, std::move(body));
    return;
  }
  try {
    route->second(std::move(request), writer);
  } catch (const std::exception& e) {
    LOG(ERROR) << "handler for " << path->first << " threw: " << e.what();
    writer->SendError(500, "internal error");  // ignored when the handler already answered
  }
}

void ServerCore::Unregister(uint64_t connection_id) {
  if (connections_.erase(connection_id) > 0) num_open.fetch_sub(1);
}

void ServerCore::DrainNow() {
  error_code ec;
  acceptor_.close(ec);
  accept_retry_timer_.cancel();
  std::vector<std::shared_ptr<ServerConnection>> open;
  for (auto& [id, weak] : connections_) {
    if (auto connection = weak.lock()) open.push_back(std::move(connection));
  }
  for (auto& connection : open) connection->CloseIfIdle();
}

void ServerCore::CloseAll() {
  error_code ec;
  acceptor_.close(ec);
  accept_retry_timer_.cancel();
  std::vector<std::shared_ptr<ServerConnection>> open;
  for (auto& [id, weak] : connections_) {
    if (auto connection = weak.lock()) open.push_back(std::move(connection));
  }
  for (auto& connection : open) connection->Close();
  connections_.clear();
  num_open.store(0);
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard<std::mutex> lock(stop_hooks_mu_);
    hooks.swap(stop_hooks_);
  }
  for (std::function<void()>& hook : hooks) hook();
}

void ServerCore::AddStopHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(stop_hooks_mu_);
  stop_hooks_.push_back(std::move(hook));
}

}  // namespace internal

HttpServer::HttpServer(HttpServerOptions options)
    : core_(std::make_shared<internal::ServerCore>(std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(std::string method, std::string path, Handler handler, size_t max_body_bytes) {
  CHECK(!io_thread_.joinable()) << "Route() after Start()";
  core_->AddRoute(std::move(method), std::move(path), std::move(handler), max_body_bytes);
}

Status HttpServer::Start() {
  CHECK(!io_thread_.joinable()) << "HttpServer started twice";
  RETURN_IF_ERROR(core_->Listen(&port_));
  core_->started.store(true);
  io_thread_ = std::thread([core = core_] { core->Run(); });
  return OkStatus();
}

void HttpServer::Drain() {
  core_->draining.store(true);
  core_->Post([core = core_] { core->DrainNow(); });
}

bool HttpServer::WaitUntilIdle(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (core_->num_open.load() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void HttpServer::Stop() {
  if (!io_thread_.joinable()) return;
  CHECK(!core_->io().get_executor().running_in_this_thread())
      << "HttpServer::Stop from a handler would join its own thread";
  core_->Post([core = core_] { core->CloseAll(); });
  core_->BlockPosts();
  io_thread_.join();
}

int64_t HttpServer::num_accepted_connections() const { return core_->num_accepted.load(); }
int64_t HttpServer::num_open_connections() const { return core_->num_open.load(); }
int64_t HttpServer::num_requests() const { return core_->num_requests.load(); }

}  // namespace surge::net
