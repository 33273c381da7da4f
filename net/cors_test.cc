#include "net/cors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/sse.h"
#include "net/test_util.h"

namespace surge::net {
namespace {

constexpr char kApp[] = "http://127.0.0.1:5173";

std::vector<std::string> Values(const HttpHeaders& headers, std::string_view name) {
  std::vector<std::string> values;
  for (const auto& [field, value] : headers) {
    if (EqualsIgnoreCase(field, name)) values.push_back(value);
  }
  return values;
}

TEST(CorsParseTest, ListsAreNormalizedAsBrowsersSerializeOrigins) {
  StatusOr<CorsOptions> options = ParseAllowedOrigins(" HTTPS://App.Example.com:443, http://127.0.0.1:5173,http://[::1]:80");
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_FALSE(options->any_origin);
  EXPECT_EQ(options->origins,
            (std::vector<std::string>{"https://app.example.com", "http://127.0.0.1:5173", "http://[::1]"}));
  EXPECT_TRUE(options->enabled());
  StatusOr<CorsOptions> any = ParseAllowedOrigins("*");
  ASSERT_TRUE(any.ok());
  EXPECT_TRUE(any->any_origin);
  EXPECT_FALSE(CorsOptions{}.enabled()) << "off by default";
}

TEST(CorsParseTest, MalformedListsAreRefusedNamingTheEntry) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty list"},
      {"http://a.com,,http://b.com", "empty entry"},
      {"http://a.com,", "empty entry"},
      {"*,http://a.com", "'*' must stand alone"},
      {"a.com", "'a.com' is not an origin"},
      {"ftp://a.com", "http:// or https://"},
      {"http://a.com/", "no trailing '/'"},
      {"http://a.com/app", "has a path"},
      {"http://user@a.com", "userinfo"},
      {"http://*.a.com", "no wildcards"},
      {"http://a.com:0", "invalid port"},
      {"http://a.com:99999", "invalid port"},
      {"http://a.com:8x", "invalid port"},
      {"http://", "has no host"},
      {"http://[::1", "bad IPv6 host"},
      {"null", "'null' origin"},
  };
  for (const auto& [list, message] : cases) {
    StatusOr<CorsOptions> options = ParseAllowedOrigins(list);
    ASSERT_FALSE(options.ok()) << list;
    EXPECT_NE(options.status().message().find(message), std::string::npos)
        << list << ": " << options.status().message();
  }
}

TEST(CorsHeadersTest, AllowedOriginIsEchoedOthersGetOnlyVary) {
  CorsOptions options = *ParseAllowedOrigins(kApp);
  HttpHeaders allowed = CorsResponseHeaders(options, {{"Origin", kApp}});
  EXPECT_EQ(allowed.Get("Access-Control-Allow-Origin"), kApp);
  EXPECT_EQ(allowed.Get("Vary"), "Origin");
  EXPECT_EQ(allowed.Get("Access-Control-Expose-Headers"), "Retry-After");
  HttpHeaders other = CorsResponseHeaders(options, {{"Origin", "http://evil.test"}});
  EXPECT_FALSE(other.Has("Access-Control-Allow-Origin"));
  EXPECT_EQ(other.Get("Vary"), "Origin");
  EXPECT_FALSE(CorsResponseHeaders(options, {}).Has("Access-Control-Allow-Origin"));
  EXPECT_TRUE(CorsResponseHeaders(CorsOptions{}, {{"Origin", kApp}}).empty()) << "off: nothing at all";
  EXPECT_EQ(CorsResponseHeaders(*ParseAllowedOrigins("*"), {{"Origin", "http://x.test"}}).Get("Access-Control-Allow-Origin"),
            "*");
  EXPECT_FALSE(IsOriginAllowed(*ParseAllowedOrigins("*"), "null"));
}

TEST(CorsHeadersTest, PreflightEchoesRequestedHeadersOrListsTheSdkOnes) {
  CorsOptions options = *ParseAllowedOrigins(kApp);
  CorsPreflight echoed = AnswerCorsPreflight(
      options, {{"Origin", kApp}, {"Access-Control-Request-Headers", "authorization, content-type, x-stainless-os"}},
      "OPTIONS, POST");
  EXPECT_EQ(echoed.status, 204);
  EXPECT_EQ(echoed.headers.Get("Access-Control-Allow-Methods"), "OPTIONS, POST");
  EXPECT_EQ(echoed.headers.Get("Access-Control-Allow-Headers"), "authorization, content-type, x-stainless-os");
  EXPECT_EQ(echoed.headers.Get("Access-Control-Max-Age"), "600");
  CorsPreflight fixed = AnswerCorsPreflight(options, {{"Origin", kApp}}, "POST");
  EXPECT_NE(fixed.headers.Get("Access-Control-Allow-Headers").find("Authorization, Content-Type, OpenAI-Organization"),
            std::string::npos);
  CorsPreflight junk = AnswerCorsPreflight(options, {{"Origin", kApp}, {"Access-Control-Request-Headers", "a b, {c}"}}, "POST");
  EXPECT_NE(junk.headers.Get("Access-Control-Allow-Headers").find("X-Stainless-Lang"), std::string::npos)
      << "a malformed request list is not echoed";
  EXPECT_EQ(AnswerCorsPreflight(options, {{"Origin", "http://evil.test"}}, "POST").status, 403);
  CorsPreflight plain = AnswerCorsPreflight(options, {}, "GET, OPTIONS");
  EXPECT_EQ(plain.status, 204);
  EXPECT_EQ(plain.headers.Get("Allow"), "GET, OPTIONS");
  EXPECT_FALSE(plain.headers.Has("Access-Control-Allow-Methods"));
}

// The server applies the policy to every response: handlers' answers, streams, the
// router's own 404 and 405, and preflights on any path.
class CorsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.cors = *ParseAllowedOrigins(kApp);
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("POST", "/v1/chat/completions", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
      writer->SendJson(200, "{}");
    });
    server_->Route("GET", "/stream", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
      writer->StartStream(200, SseHeaders());
      writer->Write(EncodeSseData("[DONE]"));
      writer->End();
    });
    server_->Route("GET", "/busy", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
      writer->Send(429, {{"Retry-After", "3"}, {"Vary", "Accept"}}, "");
    });
    ASSERT_TRUE(server_->Start().ok());
  }

  HttpResponse Call(std::string method, std::string_view path, HttpHeaders headers = {{"Origin", kApp}}) {
    StatusOr<HttpResponse> response =
        Fetch(method, "http://127.0.0.1:" + std::to_string(server_->port()) + std::string(path), "", headers);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : HttpResponse{};
  }

  std::unique_ptr<HttpServer> server_;
};

TEST_F(CorsServerTest, EveryResponseToAnAllowedOriginCarriesTheFields) {
  for (const auto& [method, path, status] : std::vector<std::tuple<std::string, std::string, int>>{
           {"POST", "/v1/chat/completions", 200}, {"GET", "/stream", 200}, {"GET", "/nope", 404},
           {"GET", "/v1/chat/completions", 405}, {"GET", "/busy", 429}}) {
    HttpResponse response = Call(method, path);
    EXPECT_EQ(response.status, status) << path;
    EXPECT_EQ(response.headers.Get("Access-Control-Allow-Origin"), kApp) << path;
    EXPECT_EQ(response.headers.Get("Access-Control-Expose-Headers"), "Retry-After") << path;
    const std::vector<std::string> vary = Values(response.headers, "Vary");
    EXPECT_NE(std::find(vary.begin(), vary.end(), "Origin"), vary.end()) << path;
  }
  EXPECT_EQ(Values(Call("GET", "/busy").headers, "Vary").size(), 2u) << "the handler's Vary is kept";
  HttpResponse other = Call("POST", "/v1/chat/completions", {{"Origin", "http://evil.test"}});
  EXPECT_EQ(other.status, 200) << "the browser, not the server, withholds the answer";
  EXPECT_FALSE(other.headers.Has("Access-Control-Allow-Origin"));
}

TEST_F(CorsServerTest, PreflightOnAnyPath) {
  HttpHeaders preflight = {{"Origin", kApp},
                           {"Access-Control-Request-Method", "POST"},
                           {"Access-Control-Request-Headers", "authorization,content-type"}};
  HttpResponse answer = Call("OPTIONS", "/v1/chat/completions", preflight);
  EXPECT_EQ(answer.status, 204);
  EXPECT_EQ(answer.headers.Get("Access-Control-Allow-Origin"), kApp);
  EXPECT_EQ(answer.headers.Get("Access-Control-Allow-Methods"), "OPTIONS, POST");
  EXPECT_EQ(answer.headers.Get("Access-Control-Allow-Headers"), "authorization,content-type");
  EXPECT_FALSE(answer.headers.Has("Content-Length")) << "a 204 has no body";
  EXPECT_TRUE(answer.body.empty());
  EXPECT_EQ(Call("OPTIONS", "/unknown", preflight).headers.Get("Access-Control-Allow-Methods"), "GET, OPTIONS, POST");
  preflight.Set("Origin", "http://evil.test");
  HttpResponse refused = Call("OPTIONS", "/v1/chat/completions", preflight);
  EXPECT_EQ(refused.status, 403);
  EXPECT_FALSE(refused.headers.Has("Access-Control-Allow-Origin"));
  EXPECT_FALSE(refused.headers.Has("Access-Control-Allow-Methods"));
  EXPECT_NE(refused.body.find("http://evil.test is not allowed"), std::string::npos) << refused.body;
  HttpResponse plain = Call("OPTIONS", "/stream", {});
  EXPECT_EQ(plain.status, 204);
  EXPECT_EQ(plain.headers.Get("Allow"), "GET, OPTIONS");
}

TEST(CorsOffTest, NoFieldsAndOptionsIsRoutedAsBefore) {
  HttpServer server;
  server.Route("POST", "/v1/chat/completions", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
    writer->SendJson(200, "{}");
  });
  ASSERT_TRUE(server.Start().ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/v1/chat/completions";
  StatusOr<HttpResponse> post = Fetch("POST", url, "", {{"Origin", kApp}});
  ASSERT_TRUE(post.ok());
  EXPECT_FALSE(post->headers.Has("Access-Control-Allow-Origin"));
  EXPECT_FALSE(post->headers.Has("Vary"));
  StatusOr<HttpResponse> options = Fetch("OPTIONS", url, "", {{"Origin", kApp}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->status, 405);
}

}  // namespace
}  // namespace surge::net
