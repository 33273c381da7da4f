#include "net/http_client.h"

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <future>

#include "net/http_server.h"
#include "net/test_util.h"

namespace surge::net {
namespace {

using testing::FakeServer;
using testing::ReadRequestHead;
using testing::WriteAll;

std::string LocalUrl(uint16_t port, std::string_view target = "/") {
  return "http://127.0.0.1:" + std::to_string(port) + std::string(target);
}

// A fake server that reads one request and answers with `reply` bytes, then closes.
std::unique_ptr<FakeServer> Replying(std::string reply) {
  return std::make_unique<FakeServer>([reply](int fd) {
    ReadRequestHead(fd);
    WriteAll(fd, reply);
  });
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailable) {
  StatusOr<HttpResponse> response = Fetch("GET", LocalUrl(testing::UnusedPort()));
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("refused"), std::string::npos)
      << response.status().ToString();
}

TEST(HttpClientTest, BadUrlsAreRejected) {
  EXPECT_EQ(Fetch("GET", "localhost:80/").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Fetch("GET", "https://127.0.0.1/").status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(Fetch("GET", "http://no-such-host.invalid/").status().code(), StatusCode::kUnavailable);
}

TEST(HttpClientTest, ServerClosingMidBodyIsDataLoss) {
  auto fixed = Replying("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this much");
  StatusOr<HttpResponse> response = Fetch("GET", LocalUrl(fixed->port()));
  EXPECT_EQ(response.status().code(), StatusCode::kDataLoss) << response.status().ToString();

  // A huge announced length is not allocated up front.
  auto huge = Replying("HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\nsmall");
  response = Fetch("GET", LocalUrl(huge->port()));
  EXPECT_EQ(response.status().code(), StatusCode::kDataLoss) << response.status().ToString();

  auto chunked = Replying("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  HttpClient client;
  std::string received;
  std::promise<ClientResult> done;
  ClientCallbacks callbacks;
  callbacks.on_data = [&](std::string_view data, SteadyTime) {
    received.append(data);
    return true;
  };
  callbacks.on_done = [&](ClientResult result) { done.set_value(std::move(result)); };
  client.Send({.url = LocalUrl(chunked->port())}, callbacks);
  ClientResult result = done.get_future().get();
  EXPECT_EQ(result.status.code(), StatusCode::kDataLoss) << result.status.ToString();
  EXPECT_EQ(result.response.status, 200);
  EXPECT_EQ(received, "hello");
}

TEST(HttpClientTest, NoResponseIsUnavailable) {
  FakeServer hangs_up([](int fd) { ReadRequestHead(fd); });
  StatusOr<HttpResponse> response = Fetch("GET", LocalUrl(hangs_up.port()));
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable) << response.status().ToString();
}

TEST(HttpClientTest, MalformedResponseIsDataLoss) {
  auto server = Replying("SPDY/9 banana\r\n\r\n");
  StatusOr<HttpResponse> response = Fetch("GET", LocalUrl(server->port()));
  EXPECT_EQ(response.status().code(), StatusCode::kDataLoss) << response.status().ToString();
  auto bad_chunk = Replying("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
  response = Fetch("GET", LocalUrl(bad_chunk->port()));
  EXPECT_EQ(response.status().code(), StatusCode::kDataLoss) << response.status().ToString();
}

TEST(HttpClientTest, BodyUntilCloseAndInterimResponses) {
  auto server = Replying("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end");
  StatusOr<HttpResponse> response = Fetch("GET", LocalUrl(server->port()));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "to the end");
}

TEST(HttpClientTest, SilentServerTimesOut) {
  FakeServer silent([](int fd) {
    ReadRequestHead(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
  });
  HttpClient client;
  auto start = std::chrono::steady_clock::now();
  StatusOr<HttpResponse> response = client.Fetch({.url = LocalUrl(silent.port()), .read_timeout_ms = 100});
  EXPECT_EQ(response.status().code(), StatusCode::kDeadlineExceeded) << response.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  response = client.Fetch({.url = LocalUrl(silent.port()), .timeout_ms = 100});
  EXPECT_EQ(response.status().code(), StatusCode::kDeadlineExceeded) << response.status().ToString();
}

TEST(HttpClientTest, ReconnectsWhenTheServerClosedAnIdleConnection) {
  HttpServer server({.idle_timeout_ms = 50});
  server.Route("GET", "/", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {}, "ok");
  });
  ASSERT_TRUE(server.Start().ok());
  HttpClient client;
  ASSERT_TRUE(client.Fetch({.url = LocalUrl(server.port())}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the server drops it
  StatusOr<HttpResponse> again = client.Fetch({.url = LocalUrl(server.port())});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->body, "ok");
  EXPECT_EQ(client.num_connections_opened(), 2);
}

TEST(HttpClientTest, ManyThreadsShareOneClient) {
  HttpServer server;
  server.Route("POST", "/", [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {}, request.body);
  });
  ASSERT_TRUE(server.Start().ok());
  HttpClient client;
  std::vector<std::thread> threads;
  std::atomic<int> num_ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string body = std::to_string(t) + ":" + std::to_string(i);
        StatusOr<HttpResponse> response =
            client.Fetch({.method = "POST", .url = LocalUrl(server.port()), .body = body});
        if (response.ok() && response->body == body) ++num_ok;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(num_ok.load(), 200);
  EXPECT_LE(client.num_connections_opened(), 4);
}

TEST(HttpClientTest, DestructionCancelsRequestsInFlight) {
  FakeServer silent([](int fd) {
    ReadRequestHead(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  std::promise<Status> done;
  {
    HttpClient client;
    ClientCallbacks callbacks;
    callbacks.on_done = [&](ClientResult result) { done.set_value(result.status); };
    client.Send({.url = LocalUrl(silent.port())}, callbacks);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(done.get_future().get().code(), StatusCode::kCancelled);
}

TEST(HttpClientTest, FirstByteTimeoutIsSeparateFromTheIdleTimeout) {
  // Answers 300 ms after the request, then sends the rest of the body 50 ms later.
  FakeServer slow_start([](int fd) {
    ReadRequestHead(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    WriteAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    WriteAll(fd, "cd");
  });
  HttpClient client;
  // A long first-byte wait covers the slow start; the short idle timeout only applies later.
  StatusOr<HttpResponse> response = client.Fetch(
      {.url = LocalUrl(slow_start.port()), .read_timeout_ms = 150, .first_byte_timeout_ms = 2000});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "abcd");
  // A short first-byte wait fails even with a long idle timeout, and says which one it was.
  response = client.Fetch(
      {.url = LocalUrl(slow_start.port()), .read_timeout_ms = 5000, .first_byte_timeout_ms = 100});
  EXPECT_EQ(response.status().code(), StatusCode::kDeadlineExceeded) << response.status().ToString();
  EXPECT_NE(response.status().message().find("first response byte"), std::string::npos);
}

TEST(HttpClientTest, CancelEndsOneRequestAndClosesItsConnection) {
  std::promise<void> server_saw_close;
  FakeServer streaming([&](int fd) {
    ReadRequestHead(fd);
    WriteAll(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    char byte;
    // Blocks until the client closes its end (recv returns 0) or 3 s pass.
    timeval timeout{3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    if (recv(fd, &byte, 1, 0) == 0) server_saw_close.set_value();
  });
  HttpClient client;
  std::promise<ClientResult> done;
  std::promise<void> got_data;
  ClientCallbacks callbacks;
  callbacks.on_data = [&](std::string_view, SteadyTime) {
    got_data.set_value();
    return true;
  };
  callbacks.on_done = [&](ClientResult result) { done.set_value(std::move(result)); };
  RequestId id = client.Send({.url = LocalUrl(streaming.port())}, callbacks);
  ASSERT_EQ(got_data.get_future().wait_for(std::chrono::seconds(3)), std::future_status::ready);
  auto start = std::chrono::steady_clock::now();
  client.Cancel(id);
  ClientResult result = done.get_future().get();
  EXPECT_EQ(result.status.code(), StatusCode::kCancelled) << result.status.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_EQ(server_saw_close.get_future().wait_for(std::chrono::seconds(3)), std::future_status::ready);
  client.Cancel(id);  // already finished: ignored
  client.Cancel(RequestId{987654});
  EXPECT_NE(static_cast<uint64_t>(client.Send({.url = LocalUrl(testing::UnusedPort())}, {})),
            static_cast<uint64_t>(id));
}

// A client on a server's loop (the router's proxy): a handler sends from the io thread,
// every callback runs on that same thread, and the server's Stop ends a request still in
// flight (its connection closed).
TEST(HttpClientTest, OnAServersLoopCallbacksRunOnItsThread) {
  auto backend = Replying("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  std::promise<void> silent_got_request;
  FakeServer silent([&](int fd) {
    ReadRequestHead(fd);
    silent_got_request.set_value();
    char byte;
    timeval timeout{3, 0};  // until the client closes its end
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    recv(fd, &byte, 1, 0);
  });
  HttpServer server;
  HttpClient client({}, server);
  std::atomic<int> num_other_thread{0};
  server.Route("GET", "/proxy", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    const std::thread::id io_thread = std::this_thread::get_id();
    ClientCallbacks callbacks;
    callbacks.on_head = [&num_other_thread, io_thread](const HttpResponse&) {
      if (std::this_thread::get_id() != io_thread) ++num_other_thread;
    };
    callbacks.on_done = [&num_other_thread, io_thread, writer](ClientResult result) {
      if (std::this_thread::get_id() != io_thread) ++num_other_thread;
      writer->Send(result.status.ok() ? 200 : 502, {}, result.status.ok() ? result.response.body : "failed");
    };
    client.Send({.url = LocalUrl(backend->port())}, std::move(callbacks));
  });
  ASSERT_TRUE(server.Start().ok());
  StatusOr<HttpResponse> response = Fetch("GET", LocalUrl(server.port(), "/proxy"));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hi");
  EXPECT_EQ(num_other_thread.load(), 0);

  std::promise<Status> done;
  ClientCallbacks callbacks;
  callbacks.on_done = [&](ClientResult result) { done.set_value(result.status); };
  client.Send({.url = LocalUrl(silent.port())}, callbacks);
  ASSERT_EQ(silent_got_request.get_future().wait_for(std::chrono::seconds(3)), std::future_status::ready);
  server.Stop();
  EXPECT_EQ(done.get_future().get().code(), StatusCode::kCancelled);
}

// Before its server started or after it stopped, no thread runs the loop: the client's
// destruction runs its shutdown itself, and nothing waits.
TEST(HttpClientTest, OnAServersLoopEndsWhetherOrNotTheServerRuns) {
  HttpServer never_started;
  { HttpClient client({}, never_started); }
  HttpServer stopped;
  HttpClient client({}, stopped);
  ASSERT_TRUE(stopped.Start().ok());
  stopped.Stop();
  std::promise<Status> done;
  ClientCallbacks callbacks;
  callbacks.on_done = [&](ClientResult result) { done.set_value(result.status); };
  client.Send({.url = LocalUrl(testing::UnusedPort())}, callbacks);  // the loop takes no more tasks
  EXPECT_EQ(done.get_future().get().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace surge::net
