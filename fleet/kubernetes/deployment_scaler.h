// DeploymentScaler: reads and sets a Deployment's replica count through its `scale`
// subresource (autoscaling/v1 Scale), with optimistic concurrency and 409 Conflict retries.
#pragma once

#include <string>

#include "fleet/kubernetes/kube_client.h"
#include "fleet/kubernetes/kube_objects.h"
#include "base/status.h"

namespace surge::k8s {

class DeploymentScaler {
 public:
  // max_attempts: PUTs tried in a row when each loses a race with another writer (409).
  DeploymentScaler(KubeClient client, std::string kube_namespace, std::string deployment, int max_attempts = 5);

  // GET .../deployments/NAME/scale. NOT_FOUND when there is no such Deployment; other HTTP
  // errors are UNAVAILABLE with the server's message.
  StatusOr<DeploymentScale> Get() const;
  // Sets spec.replicas: GET, then PUT the Scale with its resourceVersion; a 409 Conflict
  // (someone else wrote in between) is retried with a fresh GET, up to max_attempts. No
  // write when the count is already `replicas`. Returns the Scale the server answered.
  StatusOr<DeploymentScale> SetReplicas(int replicas);

  int num_conflicts() const { return num_conflicts_; }  // 409s retried so far

 private:
  std::string Path() const;
  const KubeClient client_;
  const std::string namespace_;
  const std::string deployment_;
  const int max_attempts_;
  int num_conflicts_ = 0;
};

}  // namespace surge::k8s
