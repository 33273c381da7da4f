// GET /v1/models on the router: the union of every routable backend's models (by id, the
// first backend's entry kept), asked of all backends at once.
#pragma once

#include <memory>

#include "net/response_writer.h"
#include "router/proxy.h"

namespace surge::router {

void ServeModels(ProxyContext& context, std::shared_ptr<net::ResponseWriter> writer);

}  // namespace surge::router
