#include "fleet/route_kubernetes.h"

#include <cstdio>

#include "fleet/kubernetes/deployment_scaler.h"
#include "fleet/kubernetes/kube_client.h"
#include "router/route_config.h"

namespace surge {
namespace {

using k8s::KubeClient;

StatusOr<std::pair<std::string, std::string>> SplitTarget(const std::string& target) {
  const size_t slash = target.find('/');
  if (slash == std::string::npos || slash == 0) {
    return InvalidArgumentError("--kubernetes wants NAMESPACE/SELECTOR, e.g. surge/kubernetes.io/service-name=engine");
  }
  return std::pair{target.substr(0, slash), target.substr(slash + 1)};
}

class KubernetesActuator final : public ScaleActuator {
 public:
  explicit KubernetesActuator(k8s::DeploymentScaler scaler) : scaler_(std::move(scaler)) {}
  bool Scales(const std::string& pool) const override { return pool == router::kDefaultPool; }
  int NumPending(const std::string&, int num_ready) override {
    StatusOr<k8s::DeploymentScale> scale = scaler_.Get();
    return scale.ok() ? std::max(0, scale->spec_replicas - num_ready) : 0;
  }
  Status Resize(const std::string&, int num_replicas, autoscale::CapacityClasses&, autoscale::Instant) override {
    return scaler_.SetReplicas(num_replicas).status();
  }

 private:
  k8s::DeploymentScaler scaler_;
};

}  // namespace

StatusOr<std::unique_ptr<k8s::EndpointSliceWatcher>> StartKubernetesDiscovery(const KubernetesFlags& flags,
                                                                                        router::Gateway& gateway) {
  StatusOr<std::pair<std::string, std::string>> target = SplitTarget(flags.target);
  if (!target.ok()) return target.status();
  StatusOr<k8s::KubeClientConfig> config = k8s::DefaultConfig();
  if (!config.ok()) return config.status().WithContext("--kubernetes");
  k8s::EndpointSliceWatcherOptions options;
  options.kube_namespace = target->first;
  options.label_selector = target->second;
  options.port_name = flags.port_name;
  obs::Counter& refused = gateway.metrics_registry().AddCounter(
      "surge_router_kubernetes_refused_total",
      "EndpointSlices and watch events from the Kubernetes API that discovery refused and ignored (not JSON, too "
      "deep, a field of the wrong type or out of range)");
  options.on_refused = [&refused](const Status&) { refused.Increment(); };
  auto on_change = [&gateway](const std::vector<std::string>& added, const std::vector<std::string>& removed) {
    for (const std::string& url : removed) (void)gateway.RemoveBackend(url);
    for (const std::string& url : added) {
      if (Status status = gateway.AddBackend(router::kDefaultPool, url); !status.ok()) {
        std::fprintf(stderr, "surge route: kubernetes endpoint %s: %s\n", url.c_str(), status.message().c_str());
      }
    }
  };
  auto watcher = std::make_unique<k8s::EndpointSliceWatcher>(KubeClient(std::move(config).value()),
                                                                        options, on_change);
  if (Status status = watcher->Start(); !status.ok()) return status.WithContext("--kubernetes");
  return watcher;
}

StatusOr<std::unique_ptr<ScaleActuator>> MakeKubernetesActuator(const KubernetesFlags& flags) {
  StatusOr<std::pair<std::string, std::string>> target = SplitTarget(flags.target);
  if (!target.ok()) return target.status();
  if (flags.deployment.empty()) {
    return InvalidArgumentError("--autoscale with --kubernetes needs --kubernetes-deployment NAME (the engines')");
  }
  StatusOr<k8s::KubeClientConfig> config = k8s::DefaultConfig();
  if (!config.ok()) return config.status().WithContext("--kubernetes");
  k8s::DeploymentScaler scaler(KubeClient(std::move(config).value()), target->first, flags.deployment);
  if (StatusOr<k8s::DeploymentScale> scale = scaler.Get(); !scale.ok()) {
    return scale.status().WithContext("--kubernetes-deployment " + flags.deployment);
  }
  return std::unique_ptr<ScaleActuator>(std::make_unique<KubernetesActuator>(std::move(scaler)));
}

}  // namespace surge
