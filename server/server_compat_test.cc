// What vLLM users and the ecosystem's routers ask of an engine: --api-key (401 in OpenAI's
// shape), /ping, /version, the worker endpoints sgl-router and vllm-router read (/get_load,
// /server_info, /model_info and their /get_ twins), vLLM's metric names, and OpenAI's
// service_tier onto the priority tiers, echoed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include <nlohmann/json.hpp>

#include "base/version.h"
#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::Delta;

class CompatServerTest : public testing_util::FakeServerTest {
 protected:
  void Start(ServerOptions options = testing_util::FakeServerOptions()) {
    options.worker_info = {.model_path = "models/fake", .tokenizer_path = "models/fake", .model_type = "llama",
                           .weight_dtype = "bf16", .kv_cache_dtype = "int8", .max_num_seqs = 8,
                           .max_num_batched_tokens = 256, .max_total_tokens = 1024, .block_size = 16,
                           .get_load_as_object = options.worker_info.get_load_as_object};
    StartServer(testing_util::StoriesTokenizer(), options);
  }
  net::HttpResponse Get(const std::string& path, net::HttpHeaders headers = {}) {
    auto response = net::Fetch("GET", Url(path), "", std::move(headers));
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : net::HttpResponse{};
  }
  // A completion the fake engine answers with "a", finish reason stop.
  net::HttpResponse Complete(const std::string& body, net::HttpHeaders headers = {}, size_t index = 0) {
    auto reply = std::async(std::launch::async, [&] { return net::Fetch("POST", Url("/v1/completions"), body, headers); });
    if (!engine_.WaitForSubmitted(index + 1)) return {};
    engine_.Emit(index, Delta(0, "a", {4}, FinishReason::kStop, /*finished=*/true));
    StatusOr<net::HttpResponse> response = reply.get();
    EXPECT_TRUE(response.ok());
    return response.ok() ? *response : net::HttpResponse{};
  }
};

TEST_F(CompatServerTest, ApiKeyGuardsEveryRouteButTheProbesAndMetrics) {
  ServerOptions options = testing_util::FakeServerOptions();
  options.api_keys = {"k1", "k2"};
  Start(options);
  for (const char* path : {"/v1/models", "/version", "/get_load", "/server_info", "/model_info"}) {
    const net::HttpResponse refused = Get(path);
    EXPECT_EQ(refused.status, 401) << path;
    const json error = json::parse(refused.body)["error"];
    EXPECT_EQ(error["code"], "invalid_api_key") << path;
    EXPECT_EQ(error["type"], "invalid_request_error");
    EXPECT_TRUE(error.contains("param") && error["param"].is_null());
    EXPECT_EQ(Get(path, {{"Authorization", "Bearer wrong"}}).status, 401) << path;
    EXPECT_EQ(Get(path, {{"Authorization", "Bearer k2"}}).status, 200) << path;
  }
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": "x"})").status, 401);
  EXPECT_EQ(engine_.num_submitted(), 0u);
  for (const char* path : {"/health", "/ping", "/metrics"}) EXPECT_EQ(Get(path).status, 200) << path;
  EXPECT_EQ(Complete(R"({"prompt": "x"})", {{"Authorization", "bearer k1"}}).status, 200);
}

TEST_F(CompatServerTest, ApiKeyCanGuardMetricsToo) {
  ServerOptions options = testing_util::FakeServerOptions();
  options.api_keys = {"k"};
  options.api_key_for_metrics = true;
  Start(options);
  EXPECT_EQ(Get("/metrics").status, 401);
  EXPECT_EQ(Get("/metrics", {{"Authorization", "Bearer k"}}).status, 200);
  EXPECT_EQ(Get("/ping").status, 200);
}

TEST_F(CompatServerTest, PingVersionAndWorkerAnswers) {
  Start();
  EXPECT_EQ(Get("/ping").status, 200);
  EXPECT_EQ(json::parse(Get("/version").body)["version"], kSurgeVersion);
  engine_.SetStats({.num_running = 3, .num_waiting = 2, .num_free_blocks = 48, .num_total_blocks = 64, .ready = true});
  const json loads = json::parse(Get("/get_load").body);  // SGLang's shape: one entry per rank
  ASSERT_TRUE(loads.is_array() && loads.size() == 1) << loads;
  const json& load = loads[0];
  EXPECT_EQ(load["dp_rank"], 0);
  EXPECT_EQ(load["num_tokens"], 16 * 16);  // what sgl-router's power-of-two sums
  EXPECT_EQ(load["num_reqs"], 3);
  EXPECT_EQ(load["num_waiting_reqs"], 2);
  EXPECT_EQ(load["load"], 5);
  for (const char* path : {"/server_info", "/get_server_info"}) {
    const json info = json::parse(Get(path).body);
    EXPECT_EQ(info["model_path"], "models/fake") << path;
    EXPECT_EQ(info["served_model_name"], "fake");
    EXPECT_EQ(info["version"], kSurgeVersion);
    EXPECT_EQ(info["dp_size"], 1);
    EXPECT_EQ(info["max_running_requests"], 8);
    EXPECT_EQ(info["max_total_num_tokens"], 1024);
    EXPECT_EQ(info["context_length"], 512);
  }
  for (const char* path : {"/model_info", "/get_model_info"}) {
    const json info = json::parse(Get(path).body);
    EXPECT_EQ(info["model_path"], "models/fake") << path;
    EXPECT_EQ(info["tokenizer_path"], "models/fake");
    EXPECT_EQ(info["is_generation"], true);
    EXPECT_EQ(info["model_type"], "llama");
    EXPECT_TRUE(info.contains("preferred_sampling_params"));
  }
}

// --get-load-format vllm-router: one object, whose `load` vllm-router's power-of-two reads.
TEST_F(CompatServerTest, GetLoadAsOneObject) {
  ServerOptions options = testing_util::FakeServerOptions();
  options.worker_info.get_load_as_object = true;
  Start(options);
  engine_.SetStats({.num_running = 3, .num_waiting = 2, .num_free_blocks = 48, .num_total_blocks = 64, .ready = true});
  const json load = json::parse(Get("/get_load").body);
  ASSERT_TRUE(load.is_object()) << load;
  EXPECT_EQ(load["load"], 5);
  EXPECT_EQ(load["num_tokens"], 16 * 16);
}

TEST_F(CompatServerTest, ServiceTierPicksThePriorityAndIsEchoed) {
  Start();
  const std::pair<const char*, int32_t> cases[] = {{"priority", -10}, {"flex", 10}, {"auto", 0}, {"default", 0}};
  size_t index = 0;
  for (const auto& [tier, priority] : cases) {
    const net::HttpResponse response = Complete(std::string(R"({"prompt": "x", "service_tier": ")") + tier + "\"}", {}, index);
    ASSERT_EQ(response.status, 200) << response.body;
    EXPECT_EQ(engine_.submitted(index).request.priority, priority) << tier;
    EXPECT_EQ(json::parse(response.body)["service_tier"], std::string(tier) == "auto" ? "default" : tier);
    ++index;
  }
  const net::HttpResponse plain = Complete(R"({"prompt": "x"})", {}, index);
  EXPECT_FALSE(json::parse(plain.body).contains("service_tier"));
  const net::HttpResponse bad = Post("/v1/completions", R"({"prompt": "x", "service_tier": "scale"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(json::parse(bad.body)["error"]["param"], "service_tier");
  const net::HttpResponse clash = Post("/v1/completions", R"({"prompt": "x", "service_tier": "flex", "priority": -10})");
  EXPECT_EQ(clash.status, 400);
}

TEST_F(CompatServerTest, VllmMetricNamesWithModelName) {
  ServerOptions options = testing_util::FakeServerOptions();
  options.vllm_metrics = true;
  Start(options);
  ASSERT_EQ(Complete(R"({"prompt": "x"})").status, 200);
  engine_.SetStats({.num_running = 1, .num_waiting = 4, .num_free_blocks = 3, .num_total_blocks = 4, .ready = true});
  const std::string text = Get("/metrics").body;
  for (const char* line : {"vllm:num_requests_running{model_name=\"fake\"} 1\n",
                           "vllm:num_requests_waiting{model_name=\"fake\"} 4\n",
                           "vllm:kv_cache_usage_perc{model_name=\"fake\"} 0.25\n",
                           "vllm:request_success_total{model_name=\"fake\",finished_reason=\"stop\"} 1\n",
                           "vllm:prompt_tokens_total{model_name=\"fake\"} 3\n",  // the fake engine reports no output tokens
                           "vllm:request_prompt_tokens_count{model_name=\"fake\"} 1\n",
                           "# TYPE vllm:time_to_first_token_seconds histogram\n",
                           "# TYPE vllm:e2e_request_latency_seconds histogram\n",
                           "# TYPE vllm:prefix_cache_hits_total counter\n",
                           "# TYPE vllm:request_queue_time_seconds histogram\n",
                           "# TYPE vllm:inter_token_latency_seconds histogram\n"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
  EXPECT_THAT(text, HasSubstr("surge_num_requests_waiting 4\n"));  // surge's own stay
}

TEST_F(CompatServerTest, VllmMetricsAreOptIn) {
  Start();
  EXPECT_THAT(Get("/metrics").body, ::testing::Not(HasSubstr("vllm:")));
}

}  // namespace
}  // namespace surge
