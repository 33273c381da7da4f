#include "net/url.h"

#include <gtest/gtest.h>

namespace surge::net {
namespace {

TEST(UrlTest, ParsesHostPortAndTarget) {
  StatusOr<Url> url = ParseUrl("http://127.0.0.1:8000/v1/completions?stream=true#frag");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 8000);
  EXPECT_EQ(url->target, "/v1/completions?stream=true");
  EXPECT_EQ(url->HostPort(), "127.0.0.1:8000");

  url = ParseUrl("HTTP://Example.com");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "Example.com");
  EXPECT_EQ(url->port, 80);
  EXPECT_EQ(url->target, "/");

  url = ParseUrl("http://localhost:9?x=1");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->target, "/?x=1");
}

TEST(UrlTest, ParsesIpv6Literals) {
  StatusOr<Url> url = ParseUrl("http://[::1]:8080/health");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->HostPort(), "[::1]:8080");
  url = ParseUrl("http://[fe80::1%25eth0]/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port, 80);
}

TEST(UrlTest, RejectsMalformedUrls) {
  for (const char* bad : {"127.0.0.1:80/x", "ftp://host/", "http://", "http://:80/",
                          "http://host:0/", "http://host:65536/", "http://host:12ab/",
                          "http://[::1/", "http://[::1]x/", "http://user@host/",
                          "http://ho st/", "http://host/a b"}) {
    StatusOr<Url> url = ParseUrl(bad);
    EXPECT_FALSE(url.ok()) << bad;
    if (!url.ok()) EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseUrl("https://host/").status().code(), StatusCode::kUnimplemented);
}

TEST(UrlTest, PercentDecode) {
  EXPECT_EQ(PercentDecode("deepseek-ai%2FDeepSeek-V3"), "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(PercentDecode("a%20b%41"), "a bA");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

}  // namespace
}  // namespace surge::net
