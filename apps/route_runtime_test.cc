// RouteRuntime in process, on port 0: what `surge route` starts from its flags answers, shuts
// down (twice is fine), and a setup that cannot run fails with the exit status the command
// returns (2: the setup; 1: starting), saying which flag.
#include "apps/route_runtime.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/route_flags.h"
#include "net/http_client.h"

namespace surge {
namespace {

class RouteRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("surge_route_runtime_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One backend that refuses connections (port 9 on loopback): enough for the gateway to run.
  static RouteSetup Setup(std::vector<std::string> args) {
    args.insert(args.begin(), {"--port=0", "--backend=http://127.0.0.1:9"});
    StatusOr<RouteArgs> parsed = ParseRouteArgs(args);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    return parsed.ok() ? std::move(parsed->setup) : RouteSetup{};
  }
  static net::HttpResponse Get(const RouteRuntime& runtime, const std::string& path) {
    StatusOr<net::HttpResponse> response = net::Fetch("GET", "http://127.0.0.1:" + std::to_string(runtime.port()) + path);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::HttpResponse{};
  }

  std::filesystem::path dir_;
};

TEST_F(RouteRuntimeTest, StartsAnswersAndShutsDown) {
  RouteStartError error;
  std::unique_ptr<RouteRuntime> runtime = RouteRuntime::Start(Setup({"--policy=round-robin"}), &error);
  ASSERT_NE(runtime, nullptr) << error.status.ToString();
  EXPECT_NE(runtime->port(), 0);
  // Its one backend counts as routable until enough checks have failed: either answer.
  const net::HttpResponse health = Get(*runtime, "/health");
  EXPECT_TRUE(health.status == 200 || health.status == 503) << health.status;
  EXPECT_NE(health.body.find("num_routable_backends"), std::string::npos) << health.body;
  EXPECT_EQ(Get(*runtime, "/metrics").status, 200);
  const net::HttpResponse batches = Get(*runtime, "/v1/batches");  // off: says how to turn it on
  EXPECT_EQ(batches.status, 404);
  EXPECT_NE(batches.body.find("--data-dir"), std::string::npos) << batches.body;
  runtime->Shutdown(std::chrono::milliseconds(1000));
  runtime->Shutdown(std::chrono::milliseconds(1000));
}

TEST_F(RouteRuntimeTest, ServesTheBatchApiFromItsDataDir) {
  RouteStartError error;
  std::unique_ptr<RouteRuntime> runtime =
      RouteRuntime::Start(Setup({"--data-dir=" + (dir_ / "data").string()}), &error);
  ASSERT_NE(runtime, nullptr) << error.status.ToString();
  const net::HttpResponse batches = Get(*runtime, "/v1/batches");
  EXPECT_EQ(batches.status, 200) << batches.body;
  runtime->Shutdown(std::chrono::milliseconds(1000));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "data"));
}

TEST_F(RouteRuntimeTest, RefusesWhatCannotRunWithTheCommandsExitStatus) {
  RouteStartError error;
  RouteSetup nothing_to_scale = Setup({});
  nothing_to_scale.autoscale = autoscale::AutoscaleConfig{};
  EXPECT_EQ(RouteRuntime::Start(std::move(nothing_to_scale), &error), nullptr);
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_NE(error.status.message().find("--autoscale"), std::string::npos) << error.status.ToString();

  std::ofstream(dir_ / "a_file") << "not a directory";
  EXPECT_EQ(RouteRuntime::Start(Setup({"--data-dir=" + (dir_ / "a_file").string()}), &error), nullptr);
  EXPECT_EQ(error.exit_code, 1);
  EXPECT_NE(error.status.message().find("--data-dir"), std::string::npos) << error.status.ToString();
}

TEST(RouteArgsTest, ErrorsNameTheFlag) {
  StatusOr<RouteArgs> tiers = ParseRouteArgs({"--tiers=a,b"});
  ASSERT_FALSE(tiers.ok());
  EXPECT_NE(tiers.status().message().find("--tiers"), std::string::npos) << tiers.status().ToString();
  StatusOr<RouteArgs> help = ParseRouteArgs({"--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->help);
  EXPECT_NE(help->usage.find("--kubernetes-deployment"), std::string::npos);
}

}  // namespace
}  // namespace surge
