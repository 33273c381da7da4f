// The Kubernetes API objects the clients read -- Scale, Status, EndpointSlice, the slice list and
// watch events -- parsed from the API server's bytes through base/json_access: depth bounded
// before parsing, typed fields, range-checked numbers. A malformed object is DATA_LOSS naming
// the field, never an exception. Pure functions (no I/O), so fuzz/kube_objects_fuzz.cc runs them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::k8s {

struct DeploymentScale {
  int spec_replicas = 0;    // what was asked for
  int status_replicas = 0;  // what the controller has created
  std::string selector{};   // the pods' label selector, as the Scale reports it
  std::string resource_version{};
};

// An autoscaling/v1 Scale; replicas must be integers in [0, 2^31 - 1].
StatusOr<DeploymentScale> ParseScale(std::string_view body);

// The `message` of a Kubernetes Status object in an error body, else the body's first 200 bytes.
std::string StatusMessage(std::string_view body);

// The URLs one slice contributes: for each endpoint with conditions.ready true (an absent
// ready counts as ready, as the API says) and not terminating, each address at the named
// port (an integer in [1, 65535]): "http://10.0.0.7:8000", "http://[fd00::7]:8000". Errors
// name the field; a slice without that port contributes nothing.
StatusOr<std::vector<std::string>> ReadyEndpointUrls(std::string_view slice_json, std::string_view port_name,
                                                     std::string_view scheme);

struct SliceUrls {
  std::string name;
  std::vector<std::string> urls;
};

// An EndpointSliceList. One slice that cannot be read does not fail the list: it is left out
// and its error kept in `refused`, so that one bad object cannot stop discovery.
struct SliceList {
  std::string resource_version;
  std::vector<SliceUrls> slices;
  std::vector<Status> refused;
};
StatusOr<SliceList> ParseSliceList(std::string_view body, std::string_view port_name, std::string_view scheme);

// One line of a watch. An error when the line is not an event of a known type at all; else
// the event, with `refused` set when its object could not be read (its resourceVersion is
// still taken when readable, so that the event is not replayed).
struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  std::string name;  // the slice's
  std::string resource_version;
  std::vector<std::string> urls;  // ADDED, MODIFIED: the slice's ready URLs
  Status refused;                 // the object could not be read: apply nothing
  bool gone = false;              // ERROR with code 410: re-list
  Status error;                   // ERROR other than 410: UNAVAILABLE with the server's message
};
StatusOr<WatchEvent> ParseWatchEvent(std::string_view line, std::string_view port_name, std::string_view scheme);

}  // namespace surge::k8s
