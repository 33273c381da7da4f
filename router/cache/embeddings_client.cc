#include "router/cache/embeddings_client.h"

#include <nlohmann/json.hpp>

#include "net/http_client.h"

namespace surge::router {
namespace {

std::string EndpointFor(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  constexpr std::string_view kPath = "/embeddings";
  if (url.size() >= kPath.size() && url.compare(url.size() - kPath.size(), kPath.size(), kPath) == 0) return url;
  return url + std::string(kPath);
}

}  // namespace

EmbeddingsClient::EmbeddingsClient(EmbeddingsClientOptions options)
    : options_(std::move(options)),
      endpoint_(EndpointFor(options_.url)),
      http_(std::make_unique<net::HttpClient>(net::HttpClientOptions{.connect_timeout_ms = options_.timeout_ms})) {}

EmbeddingsClient::~EmbeddingsClient() = default;

StatusOr<std::vector<float>> EmbeddingsClient::ParseEmbedding(std::string_view body) {
  const nlohmann::json response = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!response.is_object() || !response.contains("data") || !response["data"].is_array() ||
      response["data"].empty() || !response["data"][0].is_object()) {
    return DataLossError("embeddings response has no data[0]");
  }
  const nlohmann::json& embedding = response["data"][0].value("embedding", nlohmann::json());
  if (!embedding.is_array() || embedding.empty()) return DataLossError("embeddings response has no data[0].embedding");
  std::vector<float> vector;
  vector.reserve(embedding.size());
  for (const nlohmann::json& x : embedding) {
    if (!x.is_number()) return DataLossError("data[0].embedding holds a non-number");
    vector.push_back(x.get<float>());
  }
  return vector;
}

void EmbeddingsClient::Embed(std::string_view text, std::function<void(StatusOr<std::vector<float>>)> done) {
  nlohmann::json body{{"input", text}};
  if (!options_.model.empty()) body["model"] = options_.model;
  net::ClientRequest request{.method = "POST", .url = endpoint_, .headers = {{"content-type", "application/json"}},
                             .body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                             .timeout_ms = options_.timeout_ms, .read_timeout_ms = options_.timeout_ms};
  net::ClientCallbacks callbacks{.on_head = {}, .on_data = {}, .on_done = [done = std::move(done)](net::ClientResult result) {
    if (!result.status.ok()) return done(result.status);
    if (result.response.status != 200) {
      return done(UnavailableError("embeddings endpoint answered " + std::to_string(result.response.status)));
    }
    done(ParseEmbedding(result.response.body));
  }};
  http_->Send(std::move(request), std::move(callbacks));
}

}  // namespace surge::router
