#include "net/http_client.h"

#include <boost/asio/post.hpp>

#include <future>

#include "base/check.h"
#include "net/client_core.h"
#include "net/server_core.h"

namespace surge::net {
namespace internal {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// An idle connection is reusable when reading it would block: no EOF, no stray bytes.
bool LooksAlive(asio::ip::tcp::socket& socket) {
  char byte;
  error_code ec;
  socket.non_blocking(true, ec);
  size_t num_bytes = socket.receive(asio::buffer(&byte, 1), asio::socket_base::message_peek, ec);
  error_code ignored;
  socket.non_blocking(false, ignored);
  return ec == asio::error::would_block && num_bytes == 0;
}

}  // namespace

ClientCore::ClientCore(HttpClientOptions options)
    : own_io_(std::in_place), io_(&*own_io_), options_(std::move(options)) {
  work_.emplace(io_->get_executor());
}

ClientCore::ClientCore(HttpClientOptions options, SharedLoop loop)
    : shared_(std::move(loop)), io_(shared_.io), options_(std::move(options)) {}

void ClientCore::Run() { io_->run(); }

bool ClientCore::Post(std::function<void()> task) {
  std::shared_lock<std::shared_mutex> lock(post_mu_);
  if (posts_blocked_) return false;
  if (shared_.post) return shared_.post(std::move(task));
  asio::post(*io_, std::move(task));
  return true;
}

void ClientCore::BlockPosts() {
  std::unique_lock<std::shared_mutex> lock(post_mu_);
  posts_blocked_ = true;
  work_.reset();
}

void ClientCore::StartExchange(uint64_t id, Url url, ClientRequest request,
                               ClientCallbacks callbacks, ClientTimings timings, bool allow_reuse) {
  auto exchange = std::make_shared<ClientExchange>(shared_from_this(), id, std::move(url),
                                                   std::move(request), std::move(callbacks), timings);
  if (shutting_down_) {
    exchange->Fail(Status(StatusCode::kCancelled, "HttpClient is shutting down"));
    return;
  }
  exchanges_[id] = exchange;
  exchange->Start(allow_reuse);
}

std::unique_ptr<PooledConnection> ClientCore::TakeIdle(const std::string& host_port) {
  auto it = idle_.find(host_port);
  if (it == idle_.end()) return nullptr;
  std::vector<std::unique_ptr<PooledConnection>>& pool = it->second;
  // Newest first: the most recently used connection is the least likely to have been
  // closed by the server's idle timeout.
  while (!pool.empty()) {
    std::unique_ptr<PooledConnection> connection = std::move(pool.back());
    pool.pop_back();
    if (LooksAlive(connection->socket)) return connection;
  }
  return nullptr;
}

void ClientCore::ReturnIdle(const std::string& host_port,
                            std::unique_ptr<PooledConnection> connection) {
  std::vector<std::unique_ptr<PooledConnection>>& pool = idle_[host_port];
  if (shutting_down_ || pool.size() >= options_.max_idle_connections_per_host) return;
  pool.push_back(std::move(connection));
}

void ClientCore::Unregister(uint64_t exchange_id) { exchanges_.erase(exchange_id); }

void ClientCore::CancelExchange(uint64_t id) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return;
  if (std::shared_ptr<ClientExchange> exchange = it->second.lock()) {
    exchange->Fail(Status(StatusCode::kCancelled, "request cancelled by its sender"));
  }
}

void ClientCore::Shutdown() {
  shutting_down_ = true;
  std::vector<std::shared_ptr<ClientExchange>> active;
  for (auto& [id, weak] : exchanges_) {
    if (auto exchange = weak.lock()) active.push_back(std::move(exchange));
  }
  for (auto& exchange : active) {
    exchange->Fail(Status(StatusCode::kCancelled, "HttpClient shut down"));
  }
  idle_.clear();
}

}  // namespace internal

HttpClient::HttpClient(HttpClientOptions options)
    : core_(std::make_shared<internal::ClientCore>(std::move(options))) {
  io_thread_ = std::thread([core = core_] { core->Run(); });
}

HttpClient::HttpClient(HttpClientOptions options, HttpServer& server) {
  std::shared_ptr<internal::ServerCore> server_core = server.core_;
  internal::SharedLoop loop{
      .io = &server_core->io(),
      .post = [server = server_core.get()](std::function<void()> task) { return server->Post(std::move(task)); },
      .owner = server_core};
  core_ = std::make_shared<internal::ClientCore>(std::move(options), std::move(loop));
  server_core->AddStopHook([weak = std::weak_ptr<internal::ClientCore>(core_)] {
    if (auto core = weak.lock()) core->Shutdown();
  });
  server_core_ = std::move(server_core);
}

HttpClient::~HttpClient() {
  if (server_core_ == nullptr) {
    core_->Post([core = core_] { core->Shutdown(); });
    core_->BlockPosts();
    io_thread_.join();
    return;
  }
  // On a server's loop: the shutdown runs there while the loop runs; before the server
  // started or after it stopped no thread runs the loop, and it runs here.
  CHECK(!core_->io().get_executor().running_in_this_thread()) << "HttpClient destroyed on its server's io thread";
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  const bool posted = server_core_->started.load() && core_->Post([core = core_, done] {
    core->Shutdown();
    done->set_value();
  });
  core_->BlockPosts();
  if (posted) {
    finished.wait();
  } else {
    core_->Shutdown();
  }
}

RequestId HttpClient::Send(ClientRequest request, ClientCallbacks callbacks) {
  const uint64_t id = core_->next_exchange_id.fetch_add(1, std::memory_order_relaxed);
  ClientTimings timings;
  timings.start = std::chrono::steady_clock::now();
  StatusOr<Url> url = ParseUrl(request.url);
  // Posted in order with any later Cancel(id), so a cancel never overtakes its start.
  auto task = [core = core_, id, url = std::move(url), request = std::move(request),
               callbacks, timings]() mutable {
    if (!url.ok()) {
      if (callbacks.on_done) callbacks.on_done({url.status(), {}, timings});
      return;
    }
    core->StartExchange(id, std::move(url).value(), std::move(request), std::move(callbacks),
                        timings, /*allow_reuse=*/true);
  };
  if (!core_->Post(std::move(task)) && callbacks.on_done) {
    callbacks.on_done({Status(StatusCode::kCancelled, "HttpClient is shutting down"), {}, timings});
  }
  return RequestId{id};
}

void HttpClient::Cancel(RequestId id) {
  core_->Post([core = core_, id] { core->CancelExchange(static_cast<uint64_t>(id)); });
}

StatusOr<HttpResponse> HttpClient::Fetch(ClientRequest request) {
  CHECK(!core_->io().get_executor().running_in_this_thread())
      << "HttpClient::Fetch called on the client's own io thread";
  std::promise<ClientResult> promise;
  std::future<ClientResult> future = promise.get_future();
  ClientCallbacks callbacks;
  callbacks.on_done = [&promise](ClientResult result) { promise.set_value(std::move(result)); };
  Send(std::move(request), std::move(callbacks));
  ClientResult result = future.get();
  if (!result.status.ok()) return result.status;
  return std::move(result.response);
}

int64_t HttpClient::num_connections_opened() const { return core_->num_connections_opened.load(); }

StatusOr<HttpResponse> Fetch(std::string_view method, std::string_view url, std::string body,
                             HttpHeaders headers) {
  HttpClient client;
  ClientRequest request;
  request.method = std::string(method);
  request.url = std::string(url);
  request.body = std::move(body);
  request.headers = std::move(headers);
  return client.Fetch(std::move(request));
}

}  // namespace surge::net
