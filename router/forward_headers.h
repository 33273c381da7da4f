// Which header fields cross the router, each way: the request fields an engine needs
// (content type, tracing, priority, request id -- made when absent -- and Authorization
// only when configured), and the response fields minus hop-by-hop ones, plus
// x-surge-backend naming the engine that answered.
#pragma once

#include <string>
#include <string_view>

#include "net/http_types.h"

namespace surge::router {

// A fresh random request id: 32 hex digits.
std::string MakeRequestId();

// The fields sent to the backend. `request_id` is the client's x-request-id or a new one.
net::HttpHeaders BackendRequestHeaders(const net::HttpHeaders& client_headers, bool forward_authorization,
                                       std::string_view session_header, const std::string& request_id);

// The fields sent to the client for a backend's response head.
net::HttpHeaders ClientResponseHeaders(const net::HttpHeaders& backend_headers, std::string_view backend_url,
                                       const std::string& request_id);

}  // namespace surge::router
