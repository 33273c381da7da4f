// EndpointSliceWatcher: the ready engine URLs behind a label selector, from discovery.k8s.io/v1
// EndpointSlices listed and then watched (resourceVersion, bookmarks, re-list on 410 Gone).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/kubernetes/kube_client.h"
#include "fleet/kubernetes/kube_objects.h"
#include "base/periodic_thread.h"
#include "base/status.h"

namespace surge::k8s {

struct EndpointSliceWatcherOptions {
  std::string kube_namespace{};  // required
  std::string label_selector{};  // "app.kubernetes.io/name=surge-engine"; "" selects every slice
  std::string port_name = "http";  // the slice port the URLs use; "" takes a slice's only port
  std::string scheme = "http";     // of the engine URLs
  int64_t initial_backoff_ms = 200;  // after a failed list or watch, doubling ...
  int64_t max_backoff_ms = 10'000;   // ... up to this
  int64_t watch_timeout_s = 300;     // asked of the server (timeoutSeconds); then re-watch
  // Silence that ends a watch (then it is reopened): a connection that died without a FIN
  // must not hang discovery. 0: watch_timeout_s + 30 s (bookmarks are optional, so no less).
  int64_t read_timeout_ms = 0;
  // Called on the watcher's thread for each slice or watch event refused (not JSON, too
  // deep, a field of the wrong type or out of range) and ignored: the caller counts it.
  std::function<void(const Status&)> on_refused = nullptr;
};

class EndpointSliceWatcher {
 public:
  // Called on the watcher's thread with the URLs that became ready and those that left, after
  // each change (a re-list reports only the difference). Must not block for long.
  using Callback = std::function<void(const std::vector<std::string>& added, const std::vector<std::string>& removed)>;

  EndpointSliceWatcher(KubeClient client, EndpointSliceWatcherOptions options, Callback callback);
  ~EndpointSliceWatcher();  // Stop()
  EndpointSliceWatcher(const EndpointSliceWatcher&) = delete;
  EndpointSliceWatcher& operator=(const EndpointSliceWatcher&) = delete;

  // Lists once on the caller's thread (so a bad selector, namespace or credential fails here,
  // with the server's message), reports the first set, then watches on a thread of its own.
  Status Start();
  void Stop();

  std::vector<std::string> Endpoints() const;  // the current ready URLs, sorted
  int64_t num_lists() const { return num_lists_; }      // initial list + re-lists
  int64_t num_watches() const { return num_watches_; }  // watch requests made
  int64_t num_refused() const { return num_refused_; }  // slices and events refused and ignored
  std::string resource_version() const;

 private:
  // Lists every slice; one that cannot be read is refused (Refuse) and the rest still count.
  Status List();
  // One watch request until the server ends it; *relist set on a 410 (event or status).
  Status WatchOnce(bool* relist);
  // One watch line. An event that cannot be read is refused and skipped (its resourceVersion
  // still taken when readable, so it is not replayed): a bad object never ends the watch.
  Status HandleEvent(std::string_view line, bool* relist);
  // Logs (1st, 2nd, 4th, ... time), counts and reports an answer that was ignored.
  void Refuse(std::string_view what, const Status& why);
  void SetSlice(const std::string& name, std::set<std::string> urls);
  void Replace(std::map<std::string, std::set<std::string>> slices);
  void Report(const std::set<std::string>& before);
  std::set<std::string> AllUrls() const;  // mu_ held
  // One watch (after a re-list when asked), then the wait before the next: none after a
  // clean end, a doubling back-off after a failure.
  PeriodicThread::Duration WatchOnce();
  Status ListAndWatch(bool* relist);  // a re-list when *relist, then one watch
  std::string CollectionPath() const;

  const KubeClient client_;
  const EndpointSliceWatcherOptions options_;
  const Callback callback_;
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>> slices_;  // slice name -> its ready URLs; mu_
  std::string resource_version_;                         // mu_
  std::atomic<bool> stop_{false};  // also ends a watch in progress (KubeClient::Stream polls it)
  std::atomic<int64_t> num_lists_{0};
  std::atomic<int64_t> num_watches_{0};
  std::atomic<int64_t> num_refused_{0};
  int64_t backoff_ms_ = 0;  // the watch thread's own
  bool relist_ = false;     // the watch thread's own
  PeriodicThread thread_;
};

}  // namespace surge::k8s
