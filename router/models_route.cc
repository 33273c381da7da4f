#include "router/models_route.h"

#include <nlohmann/json.hpp>

#include <mutex>
#include <set>

namespace surge::router {
namespace {

using Json = nlohmann::json;

// Collects the answers; the last one to arrive writes the response.
struct ModelsUnion {
  std::shared_ptr<net::ResponseWriter> writer;
  std::mutex mu;
  size_t num_pending = 0;
  size_t num_answered = 0;
  std::set<std::string> ids;
  Json data = Json::array();

  void Add(const net::ClientResult& result) {
    std::lock_guard<std::mutex> lock(mu);
    if (result.status.ok() && result.response.status == 200) {
      Json body = Json::parse(result.response.body, nullptr, false);
      if (body.is_object() && body.contains("data") && body["data"].is_array()) {
        ++num_answered;
        for (Json& model : body["data"]) {
          if (model.is_object() && model.contains("id") && ids.insert(model["id"].dump()).second) {
            data.push_back(std::move(model));
          }
        }
      }
    }
    if (--num_pending > 0) return;
    if (num_answered == 0) {
      writer->SendError(503, "no backend answered GET /v1/models");
      return;
    }
    writer->SendJson(200, Json{{"object", "list"}, {"data", std::move(data)}}.dump());
  }
};

}  // namespace

void ServeModels(ProxyContext& context, std::shared_ptr<net::ResponseWriter> writer) {
  const int64_t now_ms = SteadyNowMs();
  std::vector<std::shared_ptr<Backend>> backends;
  for (auto& backend : context.backends.Snapshot()) {
    if (backend->IsRoutable(now_ms)) backends.push_back(std::move(backend));
  }
  if (backends.empty()) {
    writer->SendError(503, "no routable backend");
    return;
  }
  auto gather = std::make_shared<ModelsUnion>();
  gather->writer = std::move(writer);
  gather->num_pending = backends.size();
  for (const auto& backend : backends) {
    net::ClientRequest request{.method = "GET", .url = backend->url() + "/v1/models",
                               .timeout_ms = context.config.timeouts.first_byte_ms > 0
                                                 ? context.config.timeouts.first_byte_ms
                                                 : 10'000};
    context.client.Send(std::move(request), {.on_done = [gather](net::ClientResult result) { gather->Add(result); }});
  }
}

}  // namespace surge::router
