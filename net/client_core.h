// ClientCore: the io_context, connection pool and request registry behind HttpClient;
// ClientExchange: one request from connect to last byte. Internal to net/.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/parser.hpp>

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/deadline.h"
#include "net/http_client.h"
#include "net/url.h"

namespace surge::net::internal {

// A response body type that appends what arrives and, unlike string_body, never
// reserves the announced Content-Length up front (a hostile header could ask for GBs).
struct AppendBody {
  using value_type = std::string;

  class reader {
   public:
    template <bool kIsRequest, class Fields>
    reader(boost::beast::http::header<kIsRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>&, boost::system::error_code& ec) { ec = {}; }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
      std::size_t num_bytes = 0;
      for (auto it = boost::asio::buffer_sequence_begin(buffers);
           it != boost::asio::buffer_sequence_end(buffers); ++it) {
        boost::asio::const_buffer buffer = *it;
        body_.append(static_cast<const char*>(buffer.data()), buffer.size());
        num_bytes += buffer.size();
      }
      ec = {};
      return num_bytes;
    }
    void finish(boost::system::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

// An open connection, owned by one exchange at a time or by the idle pool.
struct PooledConnection {
  explicit PooledConnection(boost::asio::io_context& io) : socket(io) {}
  boost::asio::ip::tcp::socket socket;
};

class ClientExchange;

// A loop the client runs on instead of its own: a server's (HttpClient(options, server)).
struct SharedLoop {
  boost::asio::io_context* io = nullptr;
  std::function<bool(std::function<void()>)> post;  // false once the loop takes no more tasks
  std::shared_ptr<void> owner;                      // keeps `io` alive
};

class ClientCore : public std::enable_shared_from_this<ClientCore> {
 public:
  explicit ClientCore(HttpClientOptions options);  // its own loop: Run() on a thread
  ClientCore(HttpClientOptions options, SharedLoop loop);
  boost::asio::io_context& io() { return *io_; }
  const HttpClientOptions& options() const { return options_; }

  void Run();
  bool Post(std::function<void()> task);  // false once BlockPosts was called (or the shared loop's poster refuses)
  void BlockPosts();

  // io thread only.
  void StartExchange(uint64_t id, Url url, ClientRequest request, ClientCallbacks callbacks,
                     ClientTimings timings, bool allow_reuse);
  void CancelExchange(uint64_t id);
  std::unique_ptr<PooledConnection> TakeIdle(const std::string& host_port);
  void ReturnIdle(const std::string& host_port, std::unique_ptr<PooledConnection> connection);
  void Unregister(uint64_t exchange_id);
  void Shutdown();

  std::atomic<int64_t> num_connections_opened{0};
  std::atomic<uint64_t> next_exchange_id{1};  // ids are taken in Send, on any thread

 private:
  std::optional<boost::asio::io_context> own_io_;  // first member: destroyed last (own loop only)
  SharedLoop shared_;                              // a shared loop only; its owner outlives the rest
  boost::asio::io_context* const io_;              // own_io_'s or shared_.io
  const HttpClientOptions options_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::shared_mutex post_mu_;
  bool posts_blocked_ = false;  // guarded by post_mu_
  bool shutting_down_ = false;
  std::unordered_map<std::string, std::vector<std::unique_ptr<PooledConnection>>> idle_;
  std::unordered_map<uint64_t, std::weak_ptr<ClientExchange>> exchanges_;
};

class ClientExchange : public std::enable_shared_from_this<ClientExchange> {
 public:
  ClientExchange(std::shared_ptr<ClientCore> core, uint64_t id, Url url, ClientRequest request,
                 ClientCallbacks callbacks, ClientTimings timings);
  void Start(bool allow_reuse);
  void Fail(Status status);

 private:
  void Connect();
  void OnConnected(const boost::system::error_code& ec);
  void SendRequest();
  void OnSent(const boost::system::error_code& ec);
  void RetryOnFreshConnection();
  void ReadMore();
  void OnRead(const boost::system::error_code& ec, size_t num_bytes);
  void OnReadError(const boost::system::error_code& ec);
  void Parse(SteadyTime arrival);
  bool DeliverBody(SteadyTime arrival);
  template <typename Callback>
  bool RunUserCallback(Callback callback);  // false (and failed) when it threw
  void Complete();
  void Finish();
  void ResetParser();
  void ArmReadDeadline(int64_t timeout_ms, std::string what);

  std::shared_ptr<ClientCore> core_;
  const uint64_t id_;
  const Url url_;
  const std::string host_port_;
  const ClientRequest request_;
  ClientCallbacks callbacks_;
  ClientResult result_;

  std::unique_ptr<PooledConnection> connection_;
  std::optional<boost::asio::ip::tcp::resolver> resolver_;
  Deadline total_deadline_;
  Deadline read_deadline_;  // connect, then the gap between reads
  std::string request_head_;
  std::array<char, 8192> read_chunk_;
  std::string input_;
  std::optional<boost::beast::http::response_parser<AppendBody>> parser_;
  bool head_delivered_ = false;
  bool request_sent_ = false;  // the whole request is on the wire
  bool got_response_bytes_ = false;
  size_t num_body_bytes_ = 0;
  bool finished_ = false;
};

}  // namespace surge::net::internal
