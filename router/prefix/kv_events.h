// The engine's prefix-cache protocol as the router reads it: GET /kv_config and the
// batches of GET /kv_events. The format lives in api/kv_events.h (both ends in one place);
// these are its names in router/. Parsed from JSON, never from engine headers: router/
// talks to engines over HTTP only.
#pragma once

#include "api/kv_events.h"

namespace surge::router {

using KvConfig = api::KvConfig;
using KvEventRun = api::KvEventRun;
using KvEventBatch = api::KvEventBatch;
using api::ParseKvConfig;
using api::ParseKvEventBatch;

}  // namespace surge::router
