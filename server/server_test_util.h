// What the server's tests share: an OpenAiServer on an ephemeral port in front of a
// scripted FakeEngine, the bundled tokenizer with extra tags, files and SSE events.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "server/fake_engine.h"
#include "server/openai_server.h"

namespace surge::testing_util {

std::string ReadFile(const std::string& path);

// models/stories260K's tokenizer, loaded once per process.
const Tokenizer& StoriesTokenizer();

// stories260K's tokenizer with `tags` added as tokens 512, 513, ... (special or not).
std::unique_ptr<Tokenizer> TokenizerWithTags(const std::vector<std::string>& tags, bool special);

// The data payloads of an SSE body, [DONE] excluded, parsed.
std::vector<nlohmann::json> SseEvents(const std::string& body);

// Port 0, model "fake", a 512-token context.
ServerOptions FakeServerOptions();

class FakeServerTest : public ::testing::Test {
 protected:
  // The server over `tokenizer` (which must outlive it: tokenizer_ is the place for one).
  void StartServer(const Tokenizer& tokenizer, const ServerOptions& options);
  std::string Url(const std::string& path) const;
  net::HttpResponse Post(const std::string& path, const std::string& body);

  FakeEngine engine_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<OpenAiServer> server_;  // last: it goes before the engine and tokenizer
};

}  // namespace surge::testing_util
