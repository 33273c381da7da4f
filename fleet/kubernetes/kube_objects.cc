#include "fleet/kubernetes/kube_objects.h"

#include <limits>

#include "base/json_access.h"

namespace surge::k8s {
namespace {

using json::Json;

// A Scale or Status nests four levels, an EndpointSlice six, a list or watch event two more;
// anything much deeper is refused before it is parsed.
constexpr int kMaxDepth = 64;
constexpr int64_t kMaxReplicas = std::numeric_limits<int32_t>::max();

// The port named `port_name` (or the only one when the name is ""); NOT_FOUND when none is.
StatusOr<int> SlicePort(const json::ObjectReader& slice, std::string_view port_name) {
  const Json* ports = slice.Find("ports");
  if (ports == nullptr || !ports->is_array()) return DataLossError("EndpointSlice: ports must be an array");
  for (const Json& port : *ports) {
    json::ObjectReader reader(port, "EndpointSlice: a port");
    std::string name;
    if (!reader.String("name", &name).ok()) return DataLossError(reader.status().message());
    if (name != port_name && !(port_name.empty() && ports->size() == 1)) continue;
    int32_t number = 0;
    if (!reader.Int("port", int32_t{1}, int32_t{65535}, &number).ok()) return DataLossError(reader.status().message());
    if (number != 0) return number;
  }
  return NotFoundError("slice has no port named '" + std::string(port_name) + "'");
}

std::string HostForUrl(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

// Ready and not terminating (an absent or null `ready` counts as ready, as the API says).
bool Serves(const Json& endpoint) {
  const Json* conditions = json::ObjectReader(endpoint, "endpoint").Find("conditions");
  if (conditions == nullptr || !conditions->is_object()) return true;
  const auto ready = conditions->find("ready");
  const auto terminating = conditions->find("terminating");
  return (ready == conditions->end() || ready->is_null() || *ready == true) &&
         !(terminating != conditions->end() && *terminating == true);
}

StatusOr<std::vector<std::string>> UrlsOf(const Json& slice, std::string_view port_name, std::string_view scheme) {
  json::ObjectReader reader(slice, "EndpointSlice");
  const Json* endpoints = nullptr;
  if (!reader.Array("endpoints", &endpoints).ok()) return DataLossError(reader.status().message());
  std::vector<std::string> urls;
  if (endpoints == nullptr) return urls;  // an empty slice
  StatusOr<int> port = SlicePort(reader, port_name);
  if (!port.ok()) return port.status().code() == StatusCode::kNotFound ? urls : StatusOr<std::vector<std::string>>(port.status());
  for (const Json& endpoint : *endpoints) {
    if (!endpoint.is_object() || !Serves(endpoint)) continue;
    const auto addresses = endpoint.find("addresses");
    if (addresses == endpoint.end() || !addresses->is_array()) continue;
    for (const Json& address : *addresses) {
      if (!address.is_string()) continue;
      urls.push_back(std::string(scheme) + "://" + HostForUrl(address.get<std::string>()) + ":" +
                     std::to_string(*port));
    }
  }
  return urls;
}

// metadata.name and metadata.resourceVersion of an object ("" when absent).
Status ReadMetadata(const Json& object, std::string* name, std::string* resource_version) {
  const Json* metadata = nullptr;
  json::ObjectReader reader(object, "EndpointSlice");
  if (!reader.Object("metadata", &metadata).ok() || metadata == nullptr) return reader.status();
  json::ObjectReader fields(*metadata, "metadata");
  fields.String("name", name).String("resourceVersion", resource_version);
  return fields.status();
}

}  // namespace

StatusOr<DeploymentScale> ParseScale(std::string_view body) {
  StatusOr<Json> scale = json::Parse(body, "scale", kMaxDepth);
  if (!scale.ok()) return DataLossError(scale.status().message());
  json::ObjectReader reader(*scale, "scale");
  std::string kind;
  const Json* spec = nullptr;
  const Json* status = nullptr;
  const Json* metadata = nullptr;
  reader.String("kind", &kind).Object("spec", &spec).Object("status", &status).Object("metadata", &metadata);
  if (reader.ok() && kind != "Scale") return DataLossError("scale: not a Scale object");
  DeploymentScale out;
  const Json empty = Json::object();
  json::ObjectReader spec_reader(spec != nullptr ? *spec : empty, "scale: spec");
  json::ObjectReader status_reader(status != nullptr ? *status : empty, "scale: status");
  json::ObjectReader metadata_reader(metadata != nullptr ? *metadata : empty, "scale: metadata");
  spec_reader.Int("replicas", 0, static_cast<int32_t>(kMaxReplicas), &out.spec_replicas);
  status_reader.Int("replicas", 0, static_cast<int32_t>(kMaxReplicas), &out.status_replicas)
      .String("selector", &out.selector);
  metadata_reader.String("resourceVersion", &out.resource_version);
  for (const json::ObjectReader* r : {&reader, &spec_reader, &status_reader, &metadata_reader}) {
    if (!r->ok()) return DataLossError(r->status().message());
  }
  return out;
}

std::string StatusMessage(std::string_view body) {
  StatusOr<Json> status = json::Parse(body, "Status", kMaxDepth);
  std::string message;
  if (status.ok() && status->is_object()) {
    json::ObjectReader reader(*status, "Status");
    if (!reader.String("message", &message).ok()) message.clear();
  }
  return message.empty() ? std::string(body.substr(0, 200)) : message;
}

StatusOr<std::vector<std::string>> ReadyEndpointUrls(std::string_view slice_json, std::string_view port_name,
                                                     std::string_view scheme) {
  StatusOr<Json> slice = json::Parse(slice_json, "EndpointSlice", kMaxDepth);
  if (!slice.ok()) return DataLossError(slice.status().message());
  return UrlsOf(*slice, port_name, scheme);
}

StatusOr<SliceList> ParseSliceList(std::string_view body, std::string_view port_name, std::string_view scheme) {
  StatusOr<Json> list = json::Parse(body, "EndpointSliceList", kMaxDepth);
  if (!list.ok()) return DataLossError(list.status().message());
  json::ObjectReader reader(*list, "EndpointSliceList");
  const Json* items = nullptr;
  const Json* metadata = nullptr;
  SliceList out;
  if (!reader.RequiredArray("items", &items).Object("metadata", &metadata).ok()) {
    return DataLossError(reader.status().message());
  }
  if (metadata != nullptr) {
    json::ObjectReader fields(*metadata, "EndpointSliceList: metadata");
    if (!fields.String("resourceVersion", &out.resource_version).ok()) return DataLossError(fields.status().message());
  }
  for (const Json& item : *items) {
    SliceUrls slice;
    std::string unused;
    const Status read = ReadMetadata(item, &slice.name, &unused);
    StatusOr<std::vector<std::string>> urls = read.ok() ? UrlsOf(item, port_name, scheme) : read;
    if (!urls.ok()) {
      out.refused.push_back(DataLossError("EndpointSlice '" + slice.name + "': " + urls.status().message()));
      continue;
    }
    slice.urls = std::move(*urls);
    out.slices.push_back(std::move(slice));
  }
  return out;
}

namespace {

// An ERROR event's Status: 410 Gone asks for a re-list; anything else ends the watch.
void ReadWatchError(const Json& status, WatchEvent* event) {
  json::ObjectReader reader(status, "watch ERROR event");
  int64_t code = 0;
  std::string message;
  reader.Int("code", 0, 999, &code).String("message", &message);
  event->gone = reader.ok() && code == 410;
  if (!reader.ok()) message = reader.status().message();
  if (message.empty()) message = json::Dump(status).substr(0, 200);
  if (!event->gone) event->error = UnavailableError("watch ERROR event: " + message);
}

}  // namespace

StatusOr<WatchEvent> ParseWatchEvent(std::string_view line, std::string_view port_name, std::string_view scheme) {
  ASSIGN_OR_RETURN(Json parsed, json::Parse(line, "watch event", kMaxDepth));
  json::ObjectReader reader(parsed, "watch event");
  WatchEvent event;
  const Json* object = nullptr;
  if (!reader.RequiredString("type", &event.type).RequiredObject("object", &object).ok()) {
    return DataLossError(reader.status().message());
  }
  if (event.type == "ERROR") {
    ReadWatchError(*object, &event);
    return event;
  }
  if (event.type != "ADDED" && event.type != "MODIFIED" && event.type != "DELETED" && event.type != "BOOKMARK") {
    return DataLossError("watch event: unknown type '" + json::Dump(Json(event.type)).substr(0, 80) + "'");
  }
  event.refused = ReadMetadata(*object, &event.name, &event.resource_version);
  if (event.refused.ok() && (event.type == "ADDED" || event.type == "MODIFIED")) {
    StatusOr<std::vector<std::string>> urls = UrlsOf(*object, port_name, scheme);
    if (urls.ok()) event.urls = std::move(*urls);
    else event.refused = urls.status();
  }
  return event;
}

}  // namespace surge::k8s
