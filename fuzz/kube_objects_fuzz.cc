// libFuzzer target: the Kubernetes API server's answers as the autoscaler and discovery read
// them (fleet/kubernetes/kube_objects.cc, compiled into this target alone). Byte 0 picks
// the reader, ('0'..'4' in the seeds; (byte 0 - '0') % 5): 0 ParseScale (GET/PUT .../scale), 1 StatusMessage (a non-200 Status
// error), 2 ReadyEndpointUrls (one EndpointSlice), 3 ParseSliceList (the list), 4
// ParseWatchEvent (one watch line). Errors are Statuses, never exceptions; what is accepted
// is in range (replicas >= 0, ports in [1, 65535]).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/kubernetes/kube_objects.h"
#include "base/check.h"

namespace {

using namespace surge::k8s;  // NOLINT: one target, one namespace

// "http://HOST:PORT" with PORT in [1, 65535].
void CheckUrls(const std::vector<std::string>& urls) {
  for (const std::string& url : urls) {
    const size_t colon = url.rfind(':');
    CHECK(url.rfind("http://", 0) == 0 && colon != std::string::npos) << url;
    const int port = std::stoi(url.substr(colon + 1));
    CHECK(port >= 1 && port <= 65535) << url;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (static_cast<uint8_t>(data[0] - '0') % 5) {
    case 0: {
      auto scale = ParseScale(text);
      if (scale.ok()) CHECK(scale->spec_replicas >= 0 && scale->status_replicas >= 0);
      break;
    }
    case 1: CHECK(StatusMessage(text).size() <= text.size()); break;
    case 2: {
      auto urls = ReadyEndpointUrls(text, "http", "http");
      if (urls.ok()) CheckUrls(*urls);
      break;
    }
    case 3: {
      auto list = ParseSliceList(text, "", "http");
      if (list.ok()) {
        for (const SliceUrls& slice : list->slices) CheckUrls(slice.urls);
      }
      break;
    }
    default: {
      auto event = ParseWatchEvent(text, "http", "http");
      if (event.ok()) CheckUrls(event->urls);
      break;
    }
  }
  return 0;
}
