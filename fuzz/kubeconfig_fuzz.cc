// libFuzzer target: ParseKubeconfig (fleet/kubernetes/kube_config.cc with
// autoscale/read_file.cc, compiled into this target alone), the reader of $KUBECONFIG /
// ~/.kube/config as YAML or JSON. Relative file paths resolve under a directory that does
// not exist (absolute ones are read, bounded, as kubectl would); errors are Statuses, never exceptions.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fleet/kubernetes/kube_client.h"
#include "base/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // An absolute path is read as given: keep the target off devices (/dev/stdin would block).
  if (text.find("/dev") != std::string_view::npos || text.find("/proc") != std::string_view::npos) return 0;
  auto config = surge::k8s::ParseKubeconfig(text, "/nonexistent-kubeconfig-dir");
  if (config.ok()) CHECK(!config->server.empty() && config->server.back() != '/') << config->server;
  return 0;
}
