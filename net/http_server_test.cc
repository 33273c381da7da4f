#include "net/http_server.h"

#include <gtest/gtest.h>

#include <future>
#include <random>

#include "net/http_client.h"
#include "net/test_util.h"

namespace surge::net {
namespace {

using testing::RawConnection;

std::string UrlFor(const HttpServer& server, std::string_view target) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + std::string(target);
}

// A server with GET /hello (echoes the query) and POST /echo (echoes the body).
std::unique_ptr<HttpServer> StartEchoServer(HttpServerOptions options = {}) {
  auto server = std::make_unique<HttpServer>(options);
  server->Route("GET", "/hello", [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {{"Content-Type", "text/plain"}}, "hi " + request.query);
  });
  server->Route("POST", "/echo", [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {{"X-Method", request.method}, {"X-Header", request.headers.Get("x-test")}},
                 std::move(request.body));
  });
  EXPECT_TRUE(server->Start().ok());
  return server;
}

TEST(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  auto server = StartEchoServer();
  HttpClient client;
  for (int i = 0; i < 5; ++i) {
    StatusOr<HttpResponse> response = client.Fetch({.url = UrlFor(*server, "/hello?n=" + std::to_string(i))});
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "hi n=" + std::to_string(i));
    EXPECT_EQ(response->headers.Get("content-type"), "text/plain");
  }
  ClientRequest post{.method = "POST", .url = UrlFor(*server, "/echo"), .body = "payload"};
  post.headers.Add("X-Test", "case-insensitive");
  StatusOr<HttpResponse> echoed = client.Fetch(post);
  ASSERT_TRUE(echoed.ok());
  EXPECT_EQ(echoed->body, "payload");
  EXPECT_EQ(echoed->headers.Get("X-HEADER"), "case-insensitive");
  EXPECT_EQ(server->num_accepted_connections(), 1);
  EXPECT_EQ(client.num_connections_opened(), 1);
  EXPECT_EQ(server->num_requests(), 6);
}

TEST(HttpServerTest, UnknownPathIs404AndWrongMethodIs405) {
  auto server = StartEchoServer();
  StatusOr<HttpResponse> missing = Fetch("GET", UrlFor(*server, "/nope"));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->headers.Get("Content-Type"), "application/json");
  EXPECT_NE(missing->body.find(R"("type":"not_found_error","param":null,"code":"unknown_url")"), std::string::npos)
      << missing->body;
  StatusOr<HttpResponse> wrong = Fetch("DELETE", UrlFor(*server, "/hello"));
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->headers.Get("Allow"), "GET");
  EXPECT_NE(wrong->body.find(R"("code":"method_not_allowed")"), std::string::npos) << wrong->body;
}

// AddHeader labels whichever head goes out, whole or streamed; status() says what it was.
TEST(HttpServerTest, AddedHeadersGoIntoWhicheverHeadIsSent) {
  HttpServer server;
  server.Route("GET", "/whole", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->AddHeader("traceparent", "00-1-2-01");
    EXPECT_EQ(writer->status(), 0);
    writer->Send(503, {{"Content-Type", "text/plain"}}, "busy");
    EXPECT_EQ(writer->status(), 503);
  });
  server.Route("GET", "/stream", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->AddHeader("X-Added", "yes");
    writer->StartStream(200, {{"Content-Type", "text/plain"}});
    writer->AddHeader("X-Late", "no");  // the head is out: ignored
    writer->Write("a");
    writer->End();
  });
  ASSERT_TRUE(server.Start().ok());
  StatusOr<HttpResponse> whole = Fetch("GET", UrlFor(server, "/whole"));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->status, 503);
  EXPECT_EQ(whole->headers.Get("traceparent"), "00-1-2-01");
  EXPECT_EQ(whole->headers.Get("Content-Type"), "text/plain");
  StatusOr<HttpResponse> stream = Fetch("GET", UrlFor(server, "/stream"));
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(stream->headers.Get("X-Added"), "yes");
  EXPECT_FALSE(stream->headers.Has("X-Late"));
  EXPECT_EQ(stream->body, "a");
}

TEST(HttpServerTest, PrefixRoutesTakeTheRestOfThePath) {
  HttpServer server;
  server.Route("GET", "/v1/models", [](HttpRequest, std::shared_ptr<ResponseWriter> w) { w->Send(200, {}, "list"); });
  server.Route("GET", "/v1/models/*", [](HttpRequest request, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, {}, "one " + request.path);
  });
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(Fetch("GET", UrlFor(server, "/v1/models"))->body, "list");
  EXPECT_EQ(Fetch("GET", UrlFor(server, "/v1/models/org/name"))->body, "one /v1/models/org/name");
  EXPECT_EQ(Fetch("GET", UrlFor(server, "/v1/models/"))->status, 404) << "an empty rest is no match";
  EXPECT_EQ(Fetch("POST", UrlFor(server, "/v1/models/x"))->status, 405);
}

TEST(HttpServerTest, OversizedBodyIs413BeforeTheBodyIsRead) {
  bool called = false;
  HttpServer server({.max_body_bytes = 1024});
  server.Route("POST", "/echo", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    called = true;
    writer->Send(200, {}, "");
  });
  ASSERT_TRUE(server.Start().ok());
  StatusOr<HttpResponse> response =
      Fetch("POST", UrlFor(server, "/echo"), std::string(1 << 20, 'x'));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 413);
  EXPECT_NE(response->body.find("exceeds the limit of 1024 bytes"), std::string::npos);
  EXPECT_EQ(response->headers.Get("Connection"), "close");
  // Chunked bodies are capped as they arrive.
  RawConnection raw(server.port());
  std::string chunk = "200\r\n" + std::string(512, 'y') + "\r\n";
  raw.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk + chunk +
           chunk);
  std::string reply = raw.ReadUntilClose();
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 413 ")) << reply;
  EXPECT_FALSE(called);
}

// A route's own limit replaces the server's for that route only (file uploads).
TEST(HttpServerTest, ARouteMayHaveItsOwnBodyLimit) {
  HttpServer server({.max_body_bytes = 1024});
  auto size = [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {}, std::to_string(request.body.size()));
  };
  server.Route("POST", "/small", size);
  server.Route("POST", "/upload/*", size, 64 << 10);
  ASSERT_TRUE(server.Start().ok());
  const std::string body(32 << 10, 'x');
  EXPECT_EQ(Fetch("POST", UrlFor(server, "/upload/a?x=1"), body)->body, std::to_string(body.size()));
  EXPECT_EQ(Fetch("POST", UrlFor(server, "/small"), body)->status, 413);
  StatusOr<HttpResponse> over = Fetch("POST", UrlFor(server, "/upload/a"), std::string(65 << 10, 'x'));
  EXPECT_EQ(over->status, 413);
  EXPECT_NE(over->body.find("limit of 65536 bytes"), std::string::npos) << over->body;
}

TEST(HttpServerTest, GarbageIs400AndClose) {
  auto server = StartEchoServer();
  for (std::string garbage : {std::string("\x01\x02\x03 not http\r\n\r\n"),
                              std::string("GET /hello HTTP/9.9\r\n\r\n"),
                              std::string("POST /echo HTTP/1.1\r\nContent-Length: -5\r\n\r\n"),
                              std::string("GET /hello HTTP/1.1\r\nBad Header\r\n\r\n")}) {
    RawConnection raw(server->port());
    raw.Send(garbage);
    std::string reply = raw.ReadUntilClose();
    EXPECT_TRUE(reply.starts_with("HTTP/1.1 400 Bad Request\r\n")) << reply;
    EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  }
  StatusOr<HttpResponse> still_fine = Fetch("GET", UrlFor(*server, "/hello"));
  ASSERT_TRUE(still_fine.ok());
  EXPECT_EQ(still_fine->status, 200);
}

TEST(HttpServerTest, OversizedHeaderIs431) {
  auto server = StartEchoServer({.max_header_bytes = 1024});
  RawConnection raw(server->port());
  raw.Send("GET /hello HTTP/1.1\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  EXPECT_TRUE(raw.ReadUntilClose().starts_with("HTTP/1.1 431 ")) << "";
}

TEST(HttpServerTest, Http10GetsItsResponseAndAClose) {
  auto server = StartEchoServer();
  RawConnection raw(server->port());
  raw.Send("GET /hello?v=10 HTTP/1.0\r\n\r\n");
  std::string reply = raw.ReadUntilClose();
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200 OK\r\n")) << reply;
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Content-Length: 7\r\n"), std::string::npos);
  EXPECT_TRUE(reply.ends_with("\r\n\r\nhi v=10"));
}

TEST(HttpServerTest, PipelinedRequestsAnswerInOrder) {
  auto server = StartEchoServer();
  RawConnection raw(server->port());
  raw.Send("GET /hello?a HTTP/1.1\r\nHost: x\r\n\r\n"
           "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
           "GET /hello?c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string reply = raw.ReadUntilClose();
  size_t a = reply.find("hi a");
  size_t b = reply.find("\r\n\r\nabc");
  size_t c = reply.find("hi c");
  ASSERT_NE(a, std::string::npos) << reply;
  ASSERT_NE(b, std::string::npos) << reply;
  ASSERT_NE(c, std::string::npos) << reply;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(server->num_accepted_connections(), 1);
}

TEST(HttpServerTest, AnswersExpectContinue) {
  auto server = StartEchoServer();
  RawConnection raw(server->port());
  raw.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(raw.ReadUntil("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  raw.Send("hello");
  EXPECT_TRUE(raw.ReadUntil("hello").ends_with("\r\n\r\nhello"));
}

TEST(HttpServerTest, HeadHasNoBody) {
  auto server = std::make_unique<HttpServer>();
  server->Route("HEAD", "/x", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {}, "twelve bytes");
  });
  ASSERT_TRUE(server->Start().ok());
  RawConnection raw(server->port());
  raw.Send("HEAD /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string reply = raw.ReadUntilClose();
  EXPECT_NE(reply.find("Content-Length: 12\r\n"), std::string::npos) << reply;
  EXPECT_TRUE(reply.ends_with("\r\n\r\n")) << reply;
}

TEST(HttpServerTest, SlowAndIdleClientsAreDisconnected) {
  auto server = StartEchoServer({.idle_timeout_ms = 150, .header_timeout_ms = 150});
  RawConnection idle(server->port());
  RawConnection slowloris(server->port());
  slowloris.Send("GET /hello HTTP/1.1\r\nX-Slow: ");
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle.WaitForClose(2000));
  EXPECT_TRUE(slowloris.WaitForClose(2000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
}

TEST(HttpServerTest, RequestTricklingInByteByByteIsServed) {
  auto server = StartEchoServer();
  RawConnection raw(server->port());
  std::string request =
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
      "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: t\r\n\r\n";
  for (char c : request) {
    raw.Send(std::string_view(&c, 1));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_TRUE(raw.ReadUntilClose().ends_with("\r\n\r\nabcde"));
}

// Random bytes and corrupted requests, seeded: every connection ends, none hangs, and the
// server keeps serving.
TEST(HttpServerTest, SurvivesRandomInput) {
  auto server = StartEchoServer({.max_header_bytes = 2048, .max_body_bytes = 4096});
  std::mt19937 rng(1234);
  const std::string valid =
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n0\r\n\r\nGET /hello?q HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
  for (int i = 0; i < 150; ++i) {
    std::string input = valid;
    if (i % 3 == 0) {
      input.resize(rng() % 3000);
      for (char& c : input) c = static_cast<char>(rng());
    } else {
      for (int flips = 1 + rng() % 4; flips > 0; --flips) input[rng() % input.size()] = static_cast<char>(rng());
    }
    RawConnection raw(server->port());
    raw.Send(input);
    raw.Send("\r\n\r\n");
    if (i % 2 == 0) raw.ReadUntil("\r\n\r\n", 200);
  }
  StatusOr<HttpResponse> response = Fetch("GET", UrlFor(*server, "/hello?alive"));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "hi alive");
  EXPECT_TRUE(server->WaitUntilIdle(std::chrono::milliseconds(3000)))
      << server->num_open_connections() << " connections still open";
}

TEST(HttpServerTest, HandlerFailuresBecome500) {
  HttpServer server;
  server.Route("GET", "/throws", [](HttpRequest, std::shared_ptr<ResponseWriter>) {
    throw std::runtime_error("boom");
  });
  server.Route("GET", "/drops", [](HttpRequest, std::shared_ptr<ResponseWriter>) {});
  ASSERT_TRUE(server.Start().ok());
  HttpClient client;
  for (const char* path : {"/throws", "/drops", "/throws"}) {
    StatusOr<HttpResponse> response = client.Fetch({.url = UrlFor(server, path)});
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 500) << path;
  }
  EXPECT_EQ(server.num_accepted_connections(), 1);  // a 500 keeps the connection usable
}

TEST(HttpServerTest, ServesIpv6) {
  if (!testing::HasIpv6Loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  auto server = StartEchoServer({.host = "::1"});
  StatusOr<HttpResponse> response =
      Fetch("GET", "http://[::1]:" + std::to_string(server->port()) + "/hello?six");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "hi six");
}

TEST(HttpServerTest, ReportsBindFailures) {
  auto first = StartEchoServer();
  HttpServer second({.port = first->port()});
  EXPECT_EQ(second.Start().code(), StatusCode::kUnavailable);
  HttpServer bad_host({.host = "no-such-host.invalid"});
  EXPECT_EQ(bad_host.Start().code(), StatusCode::kInvalidArgument);
}

TEST(HttpServerTest, DrainFinishesInFlightResponsesAndClosesIdleOnes) {
  HttpServer server;
  std::promise<std::shared_ptr<ResponseWriter>> held;
  server.Route("GET", "/slow", [&](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    held.set_value(writer);  // answered later, from the test thread
  });
  ASSERT_TRUE(server.Start().ok());
  RawConnection idle(server.port());
  RawConnection busy(server.port());
  busy.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  std::shared_ptr<ResponseWriter> writer = held.get_future().get();
  server.Drain();
  EXPECT_TRUE(idle.WaitForClose(1000));
  writer->Send(200, {}, "late but delivered");
  std::string reply = busy.ReadUntilClose();
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos) << reply;
  EXPECT_TRUE(reply.ends_with("late but delivered"));
  busy.Close();  // what a client does after "Connection: close"; ends the server's linger
  EXPECT_TRUE(server.WaitUntilIdle(std::chrono::milliseconds(2000)));
  StatusOr<HttpResponse> refused = Fetch("GET", UrlFor(server, "/slow"));
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace surge::net
