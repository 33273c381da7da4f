// Untrusted grammars through the server (issue 31): a grammar past the compile budget or
// deadline is a 400 naming its field (guided_regex, text.format, tool_choice), a repeated
// one is refused from the cache, compiles run off the request workers, and a compile whose
// client left is cancelled. No timed assertion: a blocked compile thread makes the order
// of events certain.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::Delta;

constexpr char kBadRegex[] = "a?{1000}{8}";  // 11 bytes: 55-65 s and 521 MB before the budget

class ConstraintCompileServerTest : public testing_util::FakeServerTest {
 protected:
  void Start(double compile_timeout_s = 10) {
    ServerOptions options = testing_util::FakeServerOptions();
    options.num_workers = 1;
    options.constraint_compile_threads = 1;
    options.constraint_compile_timeout_s = compile_timeout_s;
    StartServer(testing_util::StoriesTokenizer(), options);
  }
  ServerContext& context() { return server_->context(); }

  void ExpectError(const std::string& path, const std::string& body, const std::string& param,
                   const std::string& message) {
    net::HttpResponse response = Post(path, body);
    ASSERT_EQ(response.status, 400) << body << "\n" << response.body;
    json error = json::parse(response.body)["error"];
    EXPECT_EQ(error["param"], param) << body;
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr(message)) << body;
  }

  // Holds the one compile thread until the returned promise is set.
  std::promise<void> BlockCompiles() {
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::promise<void> started;
    context().compile_runner.Post([released, &started] {
      started.set_value();
      released.wait();
    });
    started.get_future().wait();
    return release;
  }

  std::string Metrics() { return net::Fetch("GET", Url("/metrics"))->body; }
};

TEST_F(ConstraintCompileServerTest, CostlyGrammarsAre400sNamingTheFieldAndCachedAsFailures) {
  Start();
  const std::string regex = std::string(R"({"prompt": "x", "guided_regex": ")") + kBadRegex + "\"}";
  ExpectError("/v1/completions", regex, "guided_regex", "too costly to compile");
  EXPECT_EQ(context().constraints.failures_cached(), 1);
  const int64_t hits = context().constraints.hits();
  ExpectError("/v1/completions", regex, "guided_regex", "too costly to compile");
  EXPECT_EQ(context().constraints.hits(), hits + 1) << "the second one is refused from the cache";
  EXPECT_THAT(Metrics(), HasSubstr("surge_constraint_compiles_total{outcome=\"cache_hit_failure\"} 1"));
  // A Responses text.format schema's pattern, and a named tool_choice's parameters.
  ExpectError("/v1/responses", std::string(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "n",
      "schema": {"type": "string", "pattern": "b?{1000}{8}"}}}})"), "text.format", "too costly to compile");
  ExpectError("/v1/chat/completions", std::string(R"({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"s": {"type": "string", "pattern": "c?{1000}{8}"}}, "required": ["s"]}}}],
      "tool_choice": {"type": "function", "function": {"name": "f"}}})"), "tool_choice", "too costly to compile");
  EXPECT_EQ(engine_.num_submitted(), 0u);
}

TEST_F(ConstraintCompileServerTest, CompileDeadlineIsA400NamingTheField) {
  Start(/*compile_timeout_s=*/1e-6);  // passed before the compile thread looks at it
  ExpectError("/v1/completions", R"({"prompt": "x", "guided_regex": "[0-9]{1,20}"})", "guided_regex",
              "took longer than");
  EXPECT_EQ(context().constraints.failures_cached(), 0) << "a deadline says nothing about the grammar";
  EXPECT_EQ(engine_.num_submitted(), 0u);
}

TEST_F(ConstraintCompileServerTest, CompilesDoNotHoldTheRequestWorkers) {
  Start();
  engine_.Refuse(OkStatus());
  std::promise<void> release = BlockCompiles();
  auto constrained = std::async(std::launch::async, [&] {
    return Post("/v1/completions", R"({"prompt": "x", "guided_regex": "[0-9]+"})");
  });
  auto plain = std::async(std::launch::async, [&] { return Post("/v1/completions", R"({"prompt": "y"})"); });
  // The one worker is free while the compile waits: the plain request reaches the engine.
  ASSERT_TRUE(engine_.WaitForSubmitted(1));
  EXPECT_EQ(engine_.submitted(0).request.constraint, nullptr);
  engine_.Emit(0, Delta(0, "ok", {5}, FinishReason::kStop, /*finished=*/true));
  EXPECT_EQ(plain.get().status, 200);
  release.set_value();
  ASSERT_TRUE(engine_.WaitForSubmitted(2));
  EXPECT_NE(engine_.submitted(1).request.constraint, nullptr);
  engine_.Emit(1, Delta(0, "1", {5}, FinishReason::kStop, /*finished=*/true));
  EXPECT_EQ(constrained.get().status, 200);
}

TEST_F(ConstraintCompileServerTest, ClientLeavingCancelsItsCompile) {
  Start();
  std::promise<void> release = BlockCompiles();
  net::HttpClient client;
  std::promise<void> done;
  client.Send({"POST", Url("/v1/completions"), {}, std::string(R"({"prompt": "x", "guided_regex": ")") + kBadRegex + "\"}",
               /*timeout_ms=*/100},
              {.on_done = [&](net::ClientResult) { done.set_value(); }});
  done.get_future().wait();  // the client gave up and closed the connection
  for (int i = 0; i < 2500 && context().http_server->num_open_connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  release.set_value();
  std::string metrics;
  for (int i = 0; i < 2500; ++i) {
    metrics = Metrics();
    if (metrics.find("outcome=\"cancelled\"} 1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_THAT(metrics, HasSubstr("surge_constraint_compiles_total{outcome=\"cancelled\"} 1"));
  EXPECT_EQ(context().constraints.failures_cached(), 0);
  EXPECT_EQ(engine_.num_submitted(), 0u);
}

}  // namespace
}  // namespace surge
