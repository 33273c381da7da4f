// EmbeddingsClient: the semantic cache's vectors from any OpenAI-compatible embeddings API
// (--embeddings-url http://host:port/v1 -> POST /v1/embeddings {"model", "input"}). Every call
// has a deadline; a failure is the caller's cue to go on uncached, never an error it shows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::net {
class HttpClient;
}  // namespace surge::net

namespace surge::router {

struct EmbeddingsClientOptions {
  std::string url;    // the base URL (".../v1") or the endpoint itself (".../v1/embeddings")
  std::string model;  // "" = the field is left out (a server with one model)
  int64_t timeout_ms = 500;
};

class EmbeddingsClient {
 public:
  explicit EmbeddingsClient(EmbeddingsClientOptions options);
  ~EmbeddingsClient();

  // `done` runs once, on the client's io thread: the vector, or UNAVAILABLE / DEADLINE_EXCEEDED
  // / DATA_LOSS (a non-200 or a body without data[0].embedding as numbers).
  void Embed(std::string_view text, std::function<void(StatusOr<std::vector<float>>)> done);

  const std::string& endpoint() const { return endpoint_; }

  // data[0].embedding of an /embeddings response body; DATA_LOSS naming what is missing.
  static StatusOr<std::vector<float>> ParseEmbedding(std::string_view body);

 private:
  const EmbeddingsClientOptions options_;
  const std::string endpoint_;
  std::unique_ptr<net::HttpClient> http_;
};

}  // namespace surge::router
