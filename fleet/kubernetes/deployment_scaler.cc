#include "fleet/kubernetes/deployment_scaler.h"

#include "base/json_access.h"

namespace surge::k8s {
namespace {

Status HttpError(const std::string& what, const net::HttpResponse& response) {
  std::string text = what + ": HTTP " + std::to_string(response.status) + ": " + StatusMessage(response.body);
  if (response.status == 404) return NotFoundError(text);
  if (response.status == 401 || response.status == 403) return Status(StatusCode::kUnavailable, text + " (check the RBAC Role: get/update deployments/scale)");
  return UnavailableError(text);
}

}  // namespace

DeploymentScaler::DeploymentScaler(KubeClient client, std::string kube_namespace, std::string deployment,
                                   int max_attempts)
    : client_(std::move(client)),
      namespace_(std::move(kube_namespace)),
      deployment_(std::move(deployment)),
      max_attempts_(max_attempts) {}

std::string DeploymentScaler::Path() const {
  return "/apis/apps/v1/namespaces/" + QueryEscape(namespace_) + "/deployments/" + QueryEscape(deployment_) + "/scale";
}

StatusOr<DeploymentScale> DeploymentScaler::Get() const {
  ASSIGN_OR_RETURN(net::HttpResponse response, client_.Call("GET", Path()));
  if (response.status != 200) return HttpError("get scale of " + namespace_ + "/" + deployment_, response);
  return ParseScale(response.body);
}

StatusOr<DeploymentScale> DeploymentScaler::SetReplicas(int replicas) {
  if (replicas < 0) return InvalidArgumentError("replicas " + std::to_string(replicas) + " < 0");
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(DeploymentScale current, Get());
    if (current.spec_replicas == replicas) return current;
    json::Json body = {{"kind", "Scale"},
                 {"apiVersion", "autoscaling/v1"},
                 {"metadata", {{"name", deployment_}, {"namespace", namespace_},
                               {"resourceVersion", current.resource_version}}},
                 {"spec", {{"replicas", replicas}}}};
    ASSIGN_OR_RETURN(net::HttpResponse response, client_.Call("PUT", Path(), json::Dump(body), "application/json"));
    if (response.status == 200) return ParseScale(response.body);
    if (response.status != 409) return HttpError("scale " + namespace_ + "/" + deployment_, response);
    ++num_conflicts_;
    if (attempt >= max_attempts_) {
      return Status(StatusCode::kUnavailable, "scale " + namespace_ + "/" + deployment_ + ": " +
                                                  std::to_string(attempt) + " conflicts (409) in a row");
    }
  }
}

}  // namespace surge::k8s
