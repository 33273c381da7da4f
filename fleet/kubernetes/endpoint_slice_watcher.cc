#include "fleet/kubernetes/endpoint_slice_watcher.h"

#include <chrono>
#include <exception>

#include "fleet/kubernetes/kube_objects.h"
#include "base/logging.h"

namespace surge::k8s {
namespace {

// One watch event (an EndpointSlice of a few hundred endpoints is ~100 KB); a longer line
// ends the watch rather than growing without bound.
constexpr size_t kMaxWatchLineBytes = 16 << 20;

std::string ApiError(const net::HttpResponse& response) {
  return "HTTP " + std::to_string(response.status) + ": " + StatusMessage(response.body);
}

}  // namespace

EndpointSliceWatcher::EndpointSliceWatcher(KubeClient client, EndpointSliceWatcherOptions options, Callback callback)
    : client_(std::move(client)), options_(std::move(options)), callback_(std::move(callback)) {}

EndpointSliceWatcher::~EndpointSliceWatcher() { Stop(); }

std::string EndpointSliceWatcher::CollectionPath() const {
  std::string path = "/apis/discovery.k8s.io/v1/namespaces/" + QueryEscape(options_.kube_namespace) + "/endpointslices";
  if (!options_.label_selector.empty()) path += "?labelSelector=" + QueryEscape(options_.label_selector);
  return path;
}

Status EndpointSliceWatcher::Start() {
  if (options_.kube_namespace.empty()) return InvalidArgumentError("EndpointSliceWatcher: no namespace");
  RETURN_IF_ERROR(List());
  backoff_ms_ = options_.initial_backoff_ms;
  thread_.Start([this] { return WatchOnce(); });
  return OkStatus();
}

void EndpointSliceWatcher::Stop() {
  stop_ = true;
  thread_.Stop();
}

void EndpointSliceWatcher::Refuse(std::string_view what, const Status& why) {
  const int64_t count = ++num_refused_;
  if (options_.on_refused) options_.on_refused(why);
  if ((count & (count - 1)) != 0) return;  // logged the 1st, 2nd, 4th, ... time
  LOG(WARNING) << "kubernetes discovery: " << what << " refused and ignored (" << count << " so far): " << why.message();
}

Status EndpointSliceWatcher::List() {
  ++num_lists_;
  ASSIGN_OR_RETURN(net::HttpResponse response, client_.Call("GET", CollectionPath()));
  if (response.status != 200) return UnavailableError("list EndpointSlices: " + ApiError(response));
  StatusOr<SliceList> list = ParseSliceList(response.body, options_.port_name, options_.scheme);
  if (!list.ok()) return list.status().WithContext("list EndpointSlices");
  for (const Status& refused : list->refused) Refuse("a listed EndpointSlice", refused);  // the rest still count
  std::map<std::string, std::set<std::string>> slices;
  for (SliceUrls& slice : list->slices) slices[slice.name] = std::set<std::string>(slice.urls.begin(), slice.urls.end());
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_ = list->resource_version;
  }
  Replace(std::move(slices));
  return OkStatus();
}

Status EndpointSliceWatcher::HandleEvent(std::string_view line, bool* relist) {
  StatusOr<WatchEvent> event = ParseWatchEvent(line, options_.port_name, options_.scheme);
  if (!event.ok()) {
    Refuse("a watch line", event.status());
    return OkStatus();
  }
  if (event->type == "ERROR") {
    *relist = event->gone;
    return event->error;
  }
  if (!event->refused.ok()) {
    Refuse(event->type + " of EndpointSlice '" + event->name + "'", event->refused);
  } else if (event->type != "BOOKMARK") {
    SetSlice(event->name, std::set<std::string>(event->urls.begin(), event->urls.end()));  // DELETED: none
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!event->resource_version.empty()) resource_version_ = event->resource_version;
  return OkStatus();
}

Status EndpointSliceWatcher::WatchOnce(bool* relist) {
  ++num_watches_;
  std::string path = CollectionPath();
  path += options_.label_selector.empty() ? "?" : "&";
  path += "watch=1&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(options_.watch_timeout_s) +
          "&resourceVersion=" + QueryEscape(resource_version());
  std::string pending;
  Status event_status;
  net::StreamCallbacks callbacks{.on_data = [&](std::string_view data) {
    pending.append(data);
    for (size_t newline; (newline = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      if (line.find_first_not_of(" \r") == std::string::npos) continue;
      event_status = HandleEvent(line, relist);
      if (!event_status.ok() || *relist) return false;
    }
    if (pending.size() > kMaxWatchLineBytes) {  // a line without end: the server is broken
      event_status = DataLossError("watch EndpointSlices: a line longer than " + std::to_string(kMaxWatchLineBytes) +
                                   " bytes");
      Refuse("a watch line", event_status);
      return false;
    }
    return true;
  }};
  const int64_t read_timeout_ms =
      options_.read_timeout_ms > 0 ? options_.read_timeout_ms : (options_.watch_timeout_s + 30) * 1000;
  StatusOr<net::HttpResponse> response = client_.Stream(path, callbacks, &stop_, read_timeout_ms);
  if (*relist) return OkStatus();
  if (!event_status.ok()) return event_status;
  // Silence past the read timeout: the connection may be dead; reopen from where we are.
  if (response.status().code() == StatusCode::kDeadlineExceeded) return OkStatus();
  if (!response.ok()) return response.status();
  if (response->status == 410) {
    *relist = true;
    return OkStatus();
  }
  if (response->status != 200) return UnavailableError("watch EndpointSlices: HTTP " + std::to_string(response->status));
  return OkStatus();
}

// The edge of the watcher's thread: an exception (out of memory, a bug) fails this round,
// which is retried after the back-off like any failed list or watch.
Status EndpointSliceWatcher::ListAndWatch(bool* relist) {
  try {
    Status status = *relist ? List() : OkStatus();
    if (!status.ok()) return status;
    *relist = false;
    return WatchOnce(relist);
  } catch (const std::exception& e) {
    Refuse("a list or watch", InternalError(e.what()));
    return InternalError(std::string("EndpointSlice discovery: ") + e.what());
  }
}

PeriodicThread::Duration EndpointSliceWatcher::WatchOnce() {
  const Status status = ListAndWatch(&relist_);
  if (stop_ || status.ok()) {  // the server ended the watch (timeoutSeconds) or asked for a re-list
    backoff_ms_ = options_.initial_backoff_ms;
    return PeriodicThread::Duration::zero();
  }
  // A failed list or watch: wait, then try again from where we were (a stale
  // resourceVersion then draws a 410 and a re-list).
  const int64_t wait_ms = backoff_ms_;
  backoff_ms_ = std::min(backoff_ms_ * 2, options_.max_backoff_ms);
  return std::chrono::milliseconds(wait_ms);
}

void EndpointSliceWatcher::SetSlice(const std::string& name, std::set<std::string> urls) {
  std::set<std::string> before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    before = AllUrls();
    if (urls.empty()) slices_.erase(name); else slices_[name] = std::move(urls);
  }
  Report(before);
}

void EndpointSliceWatcher::Replace(std::map<std::string, std::set<std::string>> slices) {
  std::set<std::string> before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    before = AllUrls();
    slices_ = std::move(slices);
  }
  Report(before);
}

void EndpointSliceWatcher::Report(const std::set<std::string>& before) {
  std::set<std::string> after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    after = AllUrls();
  }
  std::vector<std::string> added, removed;
  for (const std::string& url : after) if (!before.contains(url)) added.push_back(url);
  for (const std::string& url : before) if (!after.contains(url)) removed.push_back(url);
  if ((!added.empty() || !removed.empty()) && callback_) callback_(added, removed);
}

std::set<std::string> EndpointSliceWatcher::AllUrls() const {
  std::set<std::string> urls;
  for (const auto& [name, slice_urls] : slices_) urls.insert(slice_urls.begin(), slice_urls.end());
  return urls;
}

std::vector<std::string> EndpointSliceWatcher::Endpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> urls = AllUrls();
  return std::vector<std::string>(urls.begin(), urls.end());
}

std::string EndpointSliceWatcher::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

}  // namespace surge::k8s
