// Helpers for the in-process server tests: the bundled stories260K model served on an
// ephemeral port of 127.0.0.1, blocking requests, exact SSE framing, /metrics values.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/serve_runtime.h"
#include "net/http_types.h"

namespace surge::testing_util {

inline constexpr char kStoriesDir[] = "models/stories260K";
inline constexpr char kChatTemplateFile[] = "tests/data/chat_template_simple.jinja";

// The bundled model with the test chat template, on port 0, small enough KV for tests.
ServeConfig StoriesConfig();
std::unique_ptr<ServeRuntime> StartStories(const ServeConfig& config);

std::string BaseUrl(const ServeRuntime& runtime);
// A blocking request; status 0 and the error in the body when the exchange failed.
net::HttpResponse Post(const ServeRuntime& runtime, const std::string& path, const std::string& body,
                       net::HttpHeaders headers = {});
net::HttpResponse Get(const ServeRuntime& runtime, const std::string& path);
nlohmann::json JsonBody(const net::HttpResponse& response);

// The data of each event of an SSE body, checking that the framing is exactly
// "data: <payload>\n\n" per event; an ADD_FAILURE names any stray byte.
std::vector<std::string> SseData(const std::string& body);

// The value of one sample ("name" or "name{labels}") in a Prometheus text body; -1 when
// absent. Every line must be a comment or "<sample> <number>".
double MetricValue(const std::string& text, const std::string& sample);

// One server for the whole suite.
class StoriesServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { runtime_ = StartStories(StoriesConfig()).release(); }
  static void TearDownTestSuite() {
    delete runtime_;
    runtime_ = nullptr;
  }
  static net::HttpResponse Post(const std::string& path, const std::string& body, net::HttpHeaders headers = {}) {
    return testing_util::Post(*runtime_, path, body, std::move(headers));
  }
  static net::HttpResponse Get(const std::string& path) { return testing_util::Get(*runtime_, path); }

  static ServeRuntime* runtime_;
};

inline ServeRuntime* StoriesServerTest::runtime_ = nullptr;

}  // namespace surge::testing_util
