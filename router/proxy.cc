#include "router/proxy.h"

#include "router/pipeline/pipeline.h"

namespace surge::router {

int GatewayStatusFor(const Status& status) {
  return status.code() == StatusCode::kDeadlineExceeded ? 504 : 502;
}

void ProxyRequest(ProxyContext& context, net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) {
  StartPipeline(context, std::move(request), std::move(writer));
}

}  // namespace surge::router
