// Filters over lists and dicts, defined in filters_seq.cc and registered in filters.cc.
#pragma once

#include "tokenizer/jinja/value.h"

namespace surge::jinja::internal {

#define SURGE_JINJA_DECLARE_FILTER(name) \
  StatusOr<Value> name(const Value& v, const CallArgs& args, const Limits& limits)

SURGE_JINJA_DECLARE_FILTER(FilterLength);
SURGE_JINJA_DECLARE_FILTER(FilterFirst);
SURGE_JINJA_DECLARE_FILTER(FilterLast);
SURGE_JINJA_DECLARE_FILTER(FilterList);
SURGE_JINJA_DECLARE_FILTER(FilterReverse);
SURGE_JINJA_DECLARE_FILTER(FilterSort);
SURGE_JINJA_DECLARE_FILTER(FilterUnique);
SURGE_JINJA_DECLARE_FILTER(FilterJoin);
SURGE_JINJA_DECLARE_FILTER(FilterMap);
SURGE_JINJA_DECLARE_FILTER(FilterSelect);
SURGE_JINJA_DECLARE_FILTER(FilterReject);
SURGE_JINJA_DECLARE_FILTER(FilterSelectAttr);
SURGE_JINJA_DECLARE_FILTER(FilterRejectAttr);
SURGE_JINJA_DECLARE_FILTER(FilterItems);
SURGE_JINJA_DECLARE_FILTER(FilterKeys);
SURGE_JINJA_DECLARE_FILTER(FilterValues);
SURGE_JINJA_DECLARE_FILTER(FilterDictSort);
SURGE_JINJA_DECLARE_FILTER(FilterSum);
SURGE_JINJA_DECLARE_FILTER(FilterMin);
SURGE_JINJA_DECLARE_FILTER(FilterMax);

#undef SURGE_JINJA_DECLARE_FILTER

}  // namespace surge::jinja::internal
