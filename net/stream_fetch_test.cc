// StreamFetch over real TLS: a CA, server and client certificates made with the openssl CLI
// for each run, a TLS server on 127.0.0.1 (OpenSSL on FakeServer's sockets), and the checks
// a Kubernetes client relies on: chain and name verification, mutual TLS, streamed bodies,
// cancel from another thread, and plain http:// against HttpServer.
#include "net/stream_fetch.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "net/http_server.h"
#include "net/test_util.h"

namespace surge::net {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Certificates for one test run: ca (signs server for IP 127.0.0.1 and client), other_ca.
class Certificates {
 public:
  Certificates() {
    std::string pattern = ::testing::TempDir() + "stream_fetch_test.XXXXXX";
    dir_ = mkdtemp(pattern.data());
    std::string script = "set -e; cd " + dir_.string() + R"(
      key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1 2>/dev/null; }
      key ca.key; key other_ca.key; key server.key; key client.key
      openssl req -x509 -new -key ca.key -out ca.crt -days 1 -subj /CN=test-ca
      openssl req -x509 -new -key other_ca.key -out other_ca.crt -days 1 -subj /CN=other-ca
      openssl req -new -key server.key -out server.csr -subj /CN=apiserver
      printf 'subjectAltName=IP:127.0.0.1\n' > server.ext
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
        -extfile server.ext -out server.crt 2>/dev/null
      openssl req -new -key client.key -out client.csr -subj /CN=surge-router
      printf 'extendedKeyUsage=clientAuth\n' > client.ext
      openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
        -extfile client.ext -out client.crt 2>/dev/null)";
    ok_ = std::system(("sh -c '" + Escape(script) + "'").c_str()) == 0;
  }
  ~Certificates() { fs::remove_all(dir_); }
  bool ok() const { return ok_; }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  std::string Pem(const char* name) const { return ReadText(dir_ / name); }

 private:
  static std::string Escape(const std::string& text) {
    std::string out;
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out;
  }
  fs::path dir_;
  bool ok_ = false;
};

// Answers each request by its path: /hello (a small body), /stream (three chunks, 20 ms
// apart), /forever (one chunk, then silence until the client leaves).
class TlsServer {
 public:
  TlsServer(const Certificates& certs, bool require_client_cert)
      : context_(SSL_CTX_new(TLS_server_method())),
        server_([this](int fd) { Serve(fd); }) {
    SSL_CTX_use_certificate_chain_file(context_, certs.Path("server.crt").c_str());
    SSL_CTX_use_PrivateKey_file(context_, certs.Path("server.key").c_str(), SSL_FILETYPE_PEM);
    if (require_client_cert) {
      SSL_CTX_load_verify_locations(context_, certs.Path("ca.crt").c_str(), nullptr);
      SSL_CTX_set_verify(context_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
  }
  ~TlsServer() { SSL_CTX_free(context_); }
  std::string Url(const char* path) const { return "https://127.0.0.1:" + std::to_string(server_.port()) + path; }
  int num_handshakes() const { return num_handshakes_; }

 private:
  void Serve(int fd) {
    SSL* ssl = SSL_new(context_);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      ++num_handshakes_;
      Respond(ssl, ReadHead(ssl));
      SSL_shutdown(ssl);
    }
    SSL_free(ssl);
  }
  static std::string ReadHead(SSL* ssl) {
    std::string head;
    char byte;
    while (head.find("\r\n\r\n") == std::string::npos && SSL_read(ssl, &byte, 1) == 1) head += byte;
    return head;
  }
  static void Write(SSL* ssl, const std::string& text) { SSL_write(ssl, text.data(), static_cast<int>(text.size())); }
  static void Respond(SSL* ssl, const std::string& head) {
    auto chunk = [](const std::string& data) {
      std::stringstream out;
      out << std::hex << data.size() << "\r\n" << data << "\r\n";
      return out.str();
    };
    const std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    if (head.starts_with("GET /hello ")) {
      Write(ssl, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Auth: " +
                     std::string(head.find("Authorization: Bearer t0ken") != std::string::npos ? "yes" : "no") +
                     "\r\n\r\nhello");
    } else if (head.starts_with("GET /stream ")) {
      Write(ssl, chunked);
      for (const char* line : {"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}\n"}) {
        Write(ssl, chunk(line));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      Write(ssl, "0\r\n\r\n");
    } else if (head.starts_with("GET /forever ")) {
      Write(ssl, chunked + chunk("first\n"));
      char byte;
      SSL_read(ssl, &byte, 1);  // returns when the client closes
    } else {
      Write(ssl, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    }
  }

  SSL_CTX* context_;
  std::atomic<int> num_handshakes_{0};
  testing::FakeServer server_;
};

class StreamFetchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs_ = new Certificates(); }
  static void TearDownTestSuite() { delete certs_; }
  void SetUp() override { ASSERT_TRUE(certs_->ok()) << "openssl CLI failed to make certificates"; }
  TlsOptions Trusting() const { return TlsOptions{.ca_pem = certs_->Pem("ca.crt")}; }
  static Certificates* certs_;
};
Certificates* StreamFetchTest::certs_ = nullptr;

TEST_F(StreamFetchTest, HttpsWithTheRightCa) {
  TlsServer server(*certs_, false);
  StreamRequest request{.url = server.Url("/hello"), .headers = {{"Authorization", "Bearer t0ken"}}};
  StatusOr<HttpResponse> response = StreamFetch(request, Trusting());
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello");
  EXPECT_EQ(response->headers.Get("X-Auth"), "yes");
}

TEST_F(StreamFetchTest, AnotherCaIsRefused) {
  TlsServer server(*certs_, false);
  StatusOr<HttpResponse> response =
      StreamFetch({.url = server.Url("/hello")}, TlsOptions{.ca_pem = certs_->Pem("other_ca.crt")});
  ASSERT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("TLS handshake"), std::string::npos) << response.status().ToString();
  EXPECT_NE(response.status().message().find("certificate verify failed"), std::string::npos);
  // The system's CAs do not know the test CA either.
  EXPECT_FALSE(StreamFetch({.url = server.Url("/hello")}, TlsOptions{}).ok());
  // Without verification the same server is reachable: the failure above was the chain.
  EXPECT_TRUE(StreamFetch({.url = server.Url("/hello")}, TlsOptions{.verify_peer = false}).ok());
}

TEST_F(StreamFetchTest, NameMismatchIsRefused) {
  TlsServer server(*certs_, false);
  // The certificate is for IP 127.0.0.1 only; "localhost" resolves there but does not match.
  std::string url = server.Url("/hello");
  url.replace(url.find("127.0.0.1"), 9, "localhost");
  StatusOr<HttpResponse> response = StreamFetch({.url = url}, Trusting());
  ASSERT_EQ(response.status().code(), StatusCode::kUnavailable) << response.status().ToString();
  EXPECT_NE(response.status().message().find("TLS handshake"), std::string::npos);
}

TEST_F(StreamFetchTest, MutualTls) {
  TlsServer server(*certs_, true);
  EXPECT_EQ(StreamFetch({.url = server.Url("/hello")}, Trusting()).status().code(), StatusCode::kUnavailable);
  TlsOptions with_cert = Trusting();
  with_cert.client_cert_pem = certs_->Pem("client.crt");
  with_cert.client_key_pem = certs_->Pem("client.key");
  StatusOr<HttpResponse> response = StreamFetch({.url = server.Url("/hello")}, with_cert);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "hello");
  with_cert.client_key_pem.clear();
  EXPECT_EQ(StreamFetch({.url = server.Url("/hello")}, with_cert).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(StreamFetchTest, StreamsChunksAsTheyArrive) {
  TlsServer server(*certs_, false);
  std::vector<std::string> pieces;
  int head_status = 0;
  StreamCallbacks callbacks{.on_head = [&](const HttpResponse& head) { head_status = head.status; },
                            .on_data = [&](std::string_view data) {
                              pieces.emplace_back(data);
                              return true;
                            }};
  StatusOr<HttpResponse> response = StreamFetch({.url = server.Url("/stream")}, Trusting(), callbacks);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(head_status, 200);
  std::string all;
  for (const std::string& piece : pieces) all += piece;
  EXPECT_EQ(all, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
  EXPECT_GE(pieces.size(), 3u);  // 20 ms apart: not one read
  EXPECT_TRUE(response->body.empty());
}

TEST_F(StreamFetchTest, CancelFromAnotherThreadEndsAWatch) {
  TlsServer server(*certs_, false);
  std::atomic<bool> cancel{false};
  std::atomic<bool> got_first{false};
  StreamCallbacks callbacks{.on_data = [&](std::string_view) {
    got_first = true;
    return true;
  }};
  std::thread canceller([&] {
    while (!got_first) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  StreamRequest request{.url = server.Url("/forever"), .timeout_ms = 0, .read_timeout_ms = 0};
  StatusOr<HttpResponse> response = StreamFetch(request, Trusting(), callbacks, &cancel);
  canceller.join();
  EXPECT_EQ(response.status().code(), StatusCode::kCancelled) << response.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(StreamFetchTest, ReadTimeoutAndTotalTimeout) {
  TlsServer server(*certs_, false);
  StreamRequest request{.url = server.Url("/forever"), .timeout_ms = 0, .read_timeout_ms = 100};
  EXPECT_EQ(StreamFetch(request, Trusting(), {.on_data = [](std::string_view) { return true; }}).status().code(),
            StatusCode::kDeadlineExceeded);
  request = {.url = server.Url("/forever"), .timeout_ms = 150, .read_timeout_ms = 0};
  StatusOr<HttpResponse> response = StreamFetch(request, Trusting());
  EXPECT_EQ(response.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(response.status().message().find("took over 150 ms"), std::string::npos) << response.status().ToString();
}

TEST_F(StreamFetchTest, PlainHttpAndErrors) {
  HttpServer server(HttpServerOptions{.port = 0});
  server.Route("PATCH", "/scale", [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
    writer->Send(200, {}, request.headers.Get("Content-Type") + " " + request.body);
  });
  ASSERT_TRUE(server.Start().ok());
  StreamRequest request{.method = "PATCH",
                        .url = "http://127.0.0.1:" + std::to_string(server.port()) + "/scale",
                        .headers = {{"Content-Type", "application/merge-patch+json"}},
                        .body = "{\"spec\":{\"replicas\":3}}"};
  StatusOr<HttpResponse> response = StreamFetch(request, {});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "application/merge-patch+json {\"spec\":{\"replicas\":3}}");
  request.max_body_bytes = 4;
  EXPECT_EQ(StreamFetch(request, {}).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(StreamFetch({.url = "ftp://x/"}, {}).status().code(), StatusCode::kInvalidArgument);
  std::string closed = "https://127.0.0.1:" + std::to_string(testing::UnusedPort()) + "/";
  EXPECT_EQ(StreamFetch({.url = closed}, {}).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(StreamFetch({.url = "https://127.0.0.1/"}, TlsOptions{.ca_pem = "not a pem"}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace surge::net
