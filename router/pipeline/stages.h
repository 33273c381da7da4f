// The stages of pipeline.h, one function each (one file each); only pipeline.cc calls them.
#pragma once

#include "router/pipeline/pipeline.h"

namespace surge::router {

StageResult RunAuthAndLimits(RequestContext& context);
StageResult RunResponseCache(RequestContext& context);
StageResult RunPoolChoice(RequestContext& context);
StageResult RunTierAdmission(RequestContext& context);
StageResult RunPolicy(RequestContext& context);
StageResult RunForward(RequestContext& context);

}  // namespace surge::router
