#include "apps/serve_test_util.h"

#include <fstream>
#include <sstream>

#include "net/http_client.h"

namespace surge::testing_util {

ServeConfig StoriesConfig() {
  ServeConfig config;
  config.model_dir = kStoriesDir;
  config.server.port = 0;
  std::ifstream file(kChatTemplateFile);
  std::ostringstream text;
  text << file.rdbuf();
  config.server.chat_template = text.str();
  config.engine.kv_cache_bytes = 64 << 20;
  config.engine.check_invariants = true;
  config.threads = 2;
  return config;
}

std::unique_ptr<ServeRuntime> StartStories(const ServeConfig& config) {
  auto runtime = ServeRuntime::Start(config);
  EXPECT_TRUE(runtime.ok()) << runtime.status().ToString();
  return runtime.ok() ? std::move(runtime).value() : nullptr;
}

std::string BaseUrl(const ServeRuntime& runtime) { return "http://127.0.0.1:" + std::to_string(runtime.port()); }

net::HttpResponse Post(const ServeRuntime& runtime, const std::string& path, const std::string& body,
                       net::HttpHeaders headers) {
  headers.Set("Content-Type", "application/json");
  auto response = net::Fetch("POST", BaseUrl(runtime) + path, body, std::move(headers));
  if (!response.ok()) return net::HttpResponse{0, {}, response.status().ToString()};
  return std::move(response).value();
}

net::HttpResponse Get(const ServeRuntime& runtime, const std::string& path) {
  auto response = net::Fetch("GET", BaseUrl(runtime) + path);
  if (!response.ok()) return net::HttpResponse{0, {}, response.status().ToString()};
  return std::move(response).value();
}

nlohmann::json JsonBody(const net::HttpResponse& response) {
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  EXPECT_FALSE(body.is_discarded()) << "not JSON: " << response.body;
  return body;
}

std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> events;
  size_t pos = 0;
  while (pos < body.size()) {
    if (body.compare(pos, 6, "data: ") != 0) {
      ADD_FAILURE() << "expected 'data: ' at byte " << pos << ": " << body.substr(pos, 80);
      break;
    }
    const size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated event at byte " << pos;
      break;
    }
    std::string data = body.substr(pos + 6, end - pos - 6);
    EXPECT_EQ(data.find('\n'), std::string::npos) << "one line per event: " << data;
    events.push_back(std::move(data));
    pos = end + 2;
  }
  return events;
}

double MetricValue(const std::string& text, const std::string& sample) {
  std::istringstream lines(text);
  std::string line;
  double found = -1;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << "malformed sample line: " << line;
    if (space == std::string::npos) continue;
    char* end = nullptr;
    const std::string number = line.substr(space + 1);
    const double value = std::strtod(number.c_str(), &end);
    EXPECT_TRUE(*end == '\0' || number == "+Inf") << "malformed value: " << line;
    if (line.substr(0, space) == sample) found = value;
  }
  return found;
}

}  // namespace surge::testing_util
