// The server as a real client sees it: Debian's curl, when installed (skipped otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "net/http_server.h"
#include "net/sse.h"

namespace surge::net {
namespace {

std::string RunCommand(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  pclose(pipe);
  return output;
}

class CurlInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
    server_.Route("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> writer) {
      writer->Send(200, {{"Content-Type", "text/plain"}}, "hi");
    });
    server_.Route("POST", "/stream", [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
      writer->StartStream(200, SseHeaders());
      for (int i = 0; i < 3; ++i) writer->Write(EncodeSseData(request.body + std::to_string(i)));
      writer->End();
    });
    ASSERT_TRUE(server_.Start().ok());
  }

  std::string Curl(const std::string& arguments) {
    return RunCommand("/usr/bin/curl -sS --noproxy '*' --max-time 5 " + arguments + " 2>&1");
  }
  std::string Url(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(server_.port()) + path;
  }

  HttpServer server_{{.max_body_bytes = 1 << 20}};
};

TEST_F(CurlInteropTest, ReusesTheConnection) {
  EXPECT_EQ(Curl(Url("/hello") + " " + Url("/hello") + " " + Url("/hello")), "hihihi");
  EXPECT_EQ(server_.num_accepted_connections(), 1);
}

TEST_F(CurlInteropTest, ReadsAnEventStream) {
  EXPECT_EQ(Curl("-N -d tok " + Url("/stream")), "data: tok0\n\ndata: tok1\n\ndata: tok2\n\n");
}

TEST_F(CurlInteropTest, GetsA413ForAnOversizedUpload) {
  std::string command = "head -c 3000000 /dev/zero | /usr/bin/curl -sS --noproxy '*' --max-time 5 "
                        "-o /dev/null -w '%{http_code}' --data-binary @- " + Url("/stream") + " 2>&1";
  EXPECT_EQ(RunCommand(command), "413");
}

}  // namespace
}  // namespace surge::net
