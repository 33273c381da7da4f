#include "bench/server_probe.h"

#include <nlohmann/json.hpp>

#include <optional>

#include "bench/rng.h"
#include "bench/word_list.h"
#include "net/url.h"
#include "obs/exposition.h"

namespace surge::bench {
namespace {

using Json = nlohmann::json;

constexpr int64_t kProbeTimeoutMs = 10'000;
constexpr int64_t kShortWords = 100;
constexpr int64_t kLongWords = 600;

StatusOr<Json> FetchJson(net::HttpClient& client, const std::string& method, const std::string& url,
                         const net::HttpHeaders& headers, std::string body) {
  net::ClientRequest request;
  request.method = method;
  request.url = url;
  request.headers = headers;
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  request.body = std::move(body);
  request.timeout_ms = request.read_timeout_ms = kProbeTimeoutMs;
  ASSIGN_OR_RETURN(net::HttpResponse response, client.Fetch(std::move(request)));
  if (response.status != 200) {
    // NOT_FOUND: the server answered, but not with this endpoint's success.
    return NotFoundError("HTTP " + std::to_string(response.status) + " from " + url);
  }
  Json json = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return DataLossError("not JSON: " + url);
  return json;
}

// The token count of `text`: vLLM's {"prompt"} -> {"count", "tokens"}, else llama.cpp's
// {"content"} -> {"tokens"}.
StatusOr<int64_t> CountTokens(net::HttpClient& client, const std::string& base_url, const std::string& model,
                              const net::HttpHeaders& headers, const std::string& text) {
  Json vllm = {{"prompt", text}};
  if (!model.empty()) vllm["model"] = model;
  Status last;
  for (const Json& body : {vllm, Json{{"content", text}}}) {
    StatusOr<Json> reply = FetchJson(client, "POST", base_url + "/tokenize", headers, body.dump());
    if (!reply.ok()) {
      last = reply.status();
      if (last.code() != StatusCode::kNotFound) break;  // unreachable or garbled: stop asking
      continue;                                         // an HTTP error: try the other dialect
    }
    if (reply->contains("count") && (*reply)["count"].is_number_integer()) return (*reply)["count"].get<int64_t>();
    if (reply->contains("tokens") && (*reply)["tokens"].is_array()) {
      return static_cast<int64_t>((*reply)["tokens"].size());
    }
    last = DataLossError("/tokenize answered without \"count\" or \"tokens\"");
  }
  return last;
}

}  // namespace

StatusOr<std::string> NormalizeBaseUrl(std::string_view url) {
  std::string base(url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 3 && base.ends_with("/v1")) base.resize(base.size() - 3);
  StatusOr<net::Url> parsed = net::ParseUrl(base);
  if (!parsed.ok()) return parsed.status().WithContext("URL '" + std::string(url) + "'");
  return base;
}

StatusOr<std::string> FirstModelId(net::HttpClient& client, const std::string& base_url,
                                   const net::HttpHeaders& headers) {
  ASSIGN_OR_RETURN(Json models, FetchJson(client, "GET", base_url + "/v1/models", headers, ""));
  if (models.contains("data") && models["data"].is_array() && !models["data"].empty()) {
    const Json& first = models["data"][0];
    if (first.is_object() && first.contains("id") && first["id"].is_string()) return first["id"].get<std::string>();
  }
  return NotFoundError(base_url + "/v1/models lists no model");
}

Calibration CalibrateTokensPerWord(net::HttpClient& client, const std::string& base_url, const std::string& model,
                                   const net::HttpHeaders& headers, uint64_t seed) {
  Rng rng(MixSeed(seed, 0xCA11B));
  std::string short_text = RandomWords(rng, kShortWords);
  std::string long_text = RandomWords(rng, kLongWords);
  StatusOr<int64_t> short_count = CountTokens(client, base_url, model, headers, short_text);
  StatusOr<int64_t> long_count =
      short_count.ok() ? CountTokens(client, base_url, model, headers, long_text) : short_count.status();
  Calibration calibration;
  if (!long_count.ok()) {
    calibration.note = "no usable /tokenize (" + long_count.status().message() + "): assuming 1 token per word";
    return calibration;
  }
  double slope = static_cast<double>(*long_count - *short_count) / static_cast<double>(kLongWords - kShortWords);
  if (!(slope > 0)) {
    calibration.note = "/tokenize counts do not grow with the text: assuming 1 token per word";
    return calibration;
  }
  calibration.tokens_per_word = slope;
  calibration.measured = true;
  calibration.note = "measured through /tokenize";
  return calibration;
}

std::optional<double> ReadServerBusySeconds(net::HttpClient& client, const std::string& base_url,
                                            const net::HttpHeaders& headers) {
  net::ClientRequest request;
  request.method = "GET";
  request.url = base_url + "/metrics";
  request.headers = headers;
  request.timeout_ms = request.read_timeout_ms = kProbeTimeoutMs;
  StatusOr<net::HttpResponse> response = client.Fetch(std::move(request));
  if (!response.ok() || response->status != 200) return std::nullopt;
  StatusOr<obs::Exposition> exposition = obs::ParseExposition(response->body);
  if (!exposition.ok()) return std::nullopt;
  std::optional<double> total;
  for (const obs::Sample& sample : exposition->samples) {
    if (sample.name == "surge_engine_busy_seconds_total") total = total.value_or(0) + sample.value;
  }
  return total;
}

}  // namespace surge::bench
