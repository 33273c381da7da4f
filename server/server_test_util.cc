#include "server/server_test_util.h"

#include <fstream>
#include <sstream>

namespace surge::testing_util {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

const Tokenizer& StoriesTokenizer() {
  static const Tokenizer* const tokenizer = [] {
    auto loaded = Tokenizer::FromDirectory("models/stories260K");
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded->release();
  }();
  return *tokenizer;
}

std::unique_ptr<Tokenizer> TokenizerWithTags(const std::vector<std::string>& tags, bool special) {
  nlohmann::json tokenizer = nlohmann::json::parse(ReadFile("models/stories260K/tokenizer.json"));
  for (size_t i = 0; i < tags.size(); ++i) {
    tokenizer["added_tokens"].push_back({{"id", 512 + i}, {"content", tags[i]}, {"special", special}});
  }
  auto loaded = Tokenizer::FromJson(tokenizer.dump(), ReadFile("models/stories260K/tokenizer_config.json"), "tags");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? std::move(loaded).value() : nullptr;
}

std::vector<nlohmann::json> SseEvents(const std::string& body) {
  std::vector<nlohmann::json> events;
  for (size_t at = body.find("data: "); at != std::string::npos; at = body.find("data: ", at + 1)) {
    const std::string data = body.substr(at + 6, body.find("\n\n", at) - at - 6);
    if (data != "[DONE]") events.push_back(nlohmann::json::parse(data));
  }
  return events;
}

ServerOptions FakeServerOptions() {
  ServerOptions options;
  options.port = 0;
  options.served_model_name = "fake";
  options.max_model_len = 512;
  return options;
}

void FakeServerTest::StartServer(const Tokenizer& tokenizer, const ServerOptions& options) {
  auto server = OpenAiServer::Create(engine_, tokenizer, options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(server).value();
  ASSERT_TRUE(server_->Start().ok());
}

std::string FakeServerTest::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
}

net::HttpResponse FakeServerTest::Post(const std::string& path, const std::string& body) {
  auto response = net::Fetch("POST", Url(path), body);
  EXPECT_TRUE(response.ok()) << response.status().ToString();
  return response.ok() ? *response : net::HttpResponse{};
}

}  // namespace surge::testing_util
