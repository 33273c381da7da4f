// The OTLP/HTTP send function over net::HttpClient: POSTs each encoded batch to the
// collector's traces URL. Its own library (obs/ itself depends on base/ only).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "obs/span_exporter.h"

namespace surge::obs {

// `endpoint`: the full traces URL, "http://host:port/v1/traces" (http only; a URL without
// a path gets "/v1/traces", as OTEL_EXPORTER_OTLP_ENDPOINT's base form would). Each POST
// gives up after `timeout_ms`. INVALID_ARGUMENT / UNIMPLEMENTED for a URL that cannot be
// used.
StatusOr<OtlpSendFunction> MakeOtlpHttpSender(const std::string& endpoint, int64_t timeout_ms = 5000);

}  // namespace surge::obs
