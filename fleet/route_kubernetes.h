// `surge route --kubernetes NAMESPACE/SELECTOR`: the engines are the ready endpoints of the
// EndpointSlices the selector matches (discovery follows them with a watch), joining the
// default pool; with --kubernetes-deployment NAME, --autoscale scales that Deployment
// through its scale subresource. Credentials: $KUBECONFIG (JSON), ~/.kube/config, or the
// pod's service account (fleet/kubernetes/kube_client.h).
#pragma once

#include <memory>
#include <string>

#include "fleet/route_autoscaler.h"
#include "fleet/kubernetes/endpoint_slice_watcher.h"
#include "base/status.h"
#include "router/gateway.h"

namespace surge {

struct KubernetesFlags {
  std::string target;      // "NAMESPACE/SELECTOR"; "" = off
  std::string port_name = "http";
  std::string deployment;  // the engines' Deployment, for --autoscale
};

// Lists once (a bad namespace, selector or credential fails here) and keeps watching.
StatusOr<std::unique_ptr<k8s::EndpointSliceWatcher>> StartKubernetesDiscovery(const KubernetesFlags& flags,
                                                                                        router::Gateway& gateway);
// The default pool's replicas are the Deployment's: pending = asked for but not yet ready.
StatusOr<std::unique_ptr<ScaleActuator>> MakeKubernetesActuator(const KubernetesFlags& flags);

}  // namespace surge
