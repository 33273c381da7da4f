#include "autoscale/kubernetes/endpoint_slice_watcher.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace surge::autoscale::k8s {
namespace {

using nlohmann::json;

// The message of a Kubernetes Status object in an error body, else the body's start.
std::string ApiError(const net::HttpResponse& response) {
  json body = json::parse(response.body, nullptr, false);
  std::string message = body.is_object() ? body.value("message", "") : "";
  if (message.empty()) message = response.body.substr(0, 200);
  return "HTTP " + std::to_string(response.status) + ": " + message;
}

StatusOr<int> SlicePort(const json& slice, std::string_view port_name) {
  if (!slice.contains("ports") || !slice["ports"].is_array()) return InvalidArgumentError("slice has no ports");
  const json& ports = slice["ports"];
  for (const json& port : ports) {
    std::string name = port.is_object() ? port.value("name", "") : "";
    if ((name == port_name || (port_name.empty() && ports.size() == 1)) && port.contains("port") &&
        port["port"].is_number_integer()) {
      return port["port"].get<int>();
    }
  }
  return NotFoundError("slice has no port named '" + std::string(port_name) + "'");
}

std::string HostForUrl(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

StatusOr<std::vector<std::string>> UrlsOf(const json& slice, std::string_view port_name, std::string_view scheme) {
  if (!slice.is_object()) return InvalidArgumentError("EndpointSlice is not a JSON object");
  std::vector<std::string> urls;
  if (!slice.contains("endpoints") || slice["endpoints"].is_null()) return urls;  // an empty slice
  StatusOr<int> port = SlicePort(slice, port_name);
  if (!port.ok()) return port.status().code() == StatusCode::kNotFound ? urls : StatusOr<std::vector<std::string>>(port.status());
  if (!slice["endpoints"].is_array()) return InvalidArgumentError("EndpointSlice endpoints is not an array");
  for (const json& endpoint : slice["endpoints"]) {
    if (!endpoint.is_object()) continue;
    json conditions = endpoint.value("conditions", json::object());
    if (!conditions.is_object()) conditions = json::object();
    bool ready = !conditions.contains("ready") || conditions["ready"].is_null() || conditions["ready"] == true;
    bool terminating = conditions.contains("terminating") && conditions["terminating"] == true;
    if (!ready || terminating || !endpoint.contains("addresses") || !endpoint["addresses"].is_array()) continue;
    for (const json& address : endpoint["addresses"]) {
      if (!address.is_string()) continue;
      urls.push_back(std::string(scheme) + "://" + HostForUrl(address.get<std::string>()) + ":" +
                     std::to_string(*port));
    }
  }
  return urls;
}

}  // namespace

StatusOr<std::vector<std::string>> ReadyEndpointUrls(std::string_view slice_json, std::string_view port_name,
                                                     std::string_view scheme) {
  try {
    return UrlsOf(json::parse(slice_json, nullptr, false), port_name, scheme);
  } catch (const json::exception& e) {  // a field of the wrong type
    return DataLossError(std::string("EndpointSlice: ") + e.what());
  }
}

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
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

void EndpointSliceWatcher::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

Status EndpointSliceWatcher::List() {
  try {
    return ListOnce();
  } catch (const json::exception& e) {  // a field of the wrong type
    return DataLossError(std::string("list EndpointSlices: ") + e.what());
  }
}

Status EndpointSliceWatcher::ListOnce() {
  ++num_lists_;
  ASSIGN_OR_RETURN(net::HttpResponse response, client_.Call("GET", CollectionPath()));
  if (response.status != 200) return UnavailableError("list EndpointSlices: " + ApiError(response));
  json list = json::parse(response.body, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return DataLossError("list EndpointSlices: not an EndpointSliceList");
  }
  std::map<std::string, std::set<std::string>> slices;
  for (const json& item : list["items"]) {
    std::string name = item.value("metadata", json::object()).value("name", "");
    ASSIGN_OR_RETURN(std::vector<std::string> urls, UrlsOf(item, options_.port_name, options_.scheme));
    slices[name] = std::set<std::string>(urls.begin(), urls.end());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_ = list.value("metadata", json::object()).value("resourceVersion", "");
  }
  Replace(std::move(slices));
  return OkStatus();
}

Status EndpointSliceWatcher::HandleEvent(std::string_view line, bool* relist) {
  try {
    return ApplyEvent(line, relist);
  } catch (const json::exception& e) {
    return DataLossError(std::string("watch event: ") + e.what());
  }
}

Status EndpointSliceWatcher::ApplyEvent(std::string_view line, bool* relist) {
  json event = json::parse(line, nullptr, false);
  if (!event.is_object() || !event.contains("object")) return DataLossError("watch: a line that is not an event");
  const std::string type = event.value("type", "");
  const json& object = event["object"];
  if (type == "ERROR") {
    if (object.value("code", 0) == 410) {
      *relist = true;
      return OkStatus();
    }
    return UnavailableError("watch ERROR event: " + object.value("message", object.dump()));
  }
  const json metadata = object.value("metadata", json::object());
  std::string rv = metadata.value("resourceVersion", "");
  if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
    std::set<std::string> urls;
    if (type != "DELETED") {
      ASSIGN_OR_RETURN(std::vector<std::string> ready, UrlsOf(object, options_.port_name, options_.scheme));
      urls.insert(ready.begin(), ready.end());
    }
    SetSlice(metadata.value("name", ""), std::move(urls));
  } else if (type != "BOOKMARK") {
    return DataLossError("watch: unknown event type '" + type + "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!rv.empty()) resource_version_ = rv;
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

void EndpointSliceWatcher::Run() {
  int64_t backoff_ms = options_.initial_backoff_ms;
  bool relist = false;
  while (!stop_) {
    Status status = relist ? List() : OkStatus();
    if (status.ok()) {
      relist = false;
      status = WatchOnce(&relist);
    }
    if (stop_) break;
    if (status.ok()) {  // the server ended the watch (timeoutSeconds) or asked for a re-list
      backoff_ms = options_.initial_backoff_ms;
      continue;
    }
    // A failed list or watch: wait, then try again from where we were (a stale
    // resourceVersion then draws a 410 and a re-list).
    for (int64_t waited_ms = 0; waited_ms < backoff_ms && !stop_; waited_ms += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
  }
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

}  // namespace surge::autoscale::k8s
