#include "router/models_route.h"

#include <mutex>
#include <set>
#include <vector>

#include "base/json_access.h"

namespace surge::router {
namespace {

using json::Json;

// A model list nests a few levels (permissions, metadata); anything deeper is refused.
constexpr int kMaxModelsDepth = 32;

// The models of one GET /v1/models answer; an error when it is not a list of them.
StatusOr<std::vector<Json>> ModelsOf(std::string_view text) {
  ASSIGN_OR_RETURN(Json body, json::Parse(text, "/v1/models", kMaxModelsDepth));
  json::ObjectReader reader(body, "/v1/models");
  const Json* data = nullptr;
  if (!reader.RequiredArray("data", &data).ok()) return reader.status();
  std::vector<Json> models;
  for (const Json& model : *data) {
    if (model.is_object() && model.contains("id")) models.push_back(model);
  }
  return models;
}

// Collects the answers; the last one to arrive writes the response.
struct ModelsUnion {
  std::shared_ptr<net::ResponseWriter> writer;
  std::mutex mu;
  size_t num_pending = 0;
  size_t num_answered = 0;
  std::set<std::string> ids;
  Json data = Json::array();

  void Add(const Backend& backend, const net::ClientResult& result) {
    std::lock_guard<std::mutex> lock(mu);
    if (result.status.ok() && result.response.status == 200) {
      StatusOr<std::vector<Json>> models = ModelsOf(result.response.body);
      if (models.ok()) {
        ++num_answered;
        for (Json& model : *models) {
          if (ids.insert(json::Dump(model["id"])).second) data.push_back(std::move(model));
        }
      } else {
        backend.RefuseAnswer(BackendAnswer::kModels, models.status());
      }
    }
    if (--num_pending > 0) return;
    if (num_answered == 0) {
      writer->SendError(503, "no backend answered GET /v1/models");
      return;
    }
    writer->SendJson(200, json::Dump(Json{{"object", "list"}, {"data", std::move(data)}}));
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
    context.client.Send(std::move(request), {.on_done = [gather, backend](net::ClientResult result) { gather->Add(*backend, result); }});
  }
}

}  // namespace surge::router
