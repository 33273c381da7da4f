#include "api/tool_choice_schema.h"

namespace surge::api {
namespace {

Json ParametersOf(const Json& tool) {
  const Json& function = tool["function"];
  if (!function.contains("parameters") || function["parameters"].is_null()) return Json{{"type", "object"}};
  return function["parameters"];
}

// {"name": N, "parameters": P} with both required and nothing else.
Json CallSchema(const Json& tool) {
  return Json{{"type", "object"},
              {"properties", {{"name", {{"const", tool["function"]["name"]}}}, {"parameters", ParametersOf(tool)}}},
              {"required", {"name", "parameters"}},
              {"additionalProperties", false}};
}

Json RequiredSchema(const Json& tools, bool parallel_tool_calls) {
  Json calls = Json::array();
  for (const Json& tool : tools) calls.push_back(CallSchema(tool));
  Json items = calls.size() == 1 ? calls[0] : Json{{"anyOf", std::move(calls)}};
  Json schema = {{"type", "array"}, {"items", std::move(items)}, {"minItems", 1}};
  if (!parallel_tool_calls) schema["maxItems"] = 1;
  return schema;
}

// Under "auto" the model may answer in free text, so a call's arguments cannot be held to
// their schema: strict there would be a promise not kept.
void RefuseStrictTools(FieldReader& reader, const Json& tools) {
  for (size_t i = 0; i < tools.size(); ++i) {
    if (tools[i]["function"].value("strict", false) != true) continue;
    return reader.Require(false, "tools",
                          "tools[" + std::to_string(i) + "].function.strict is true, which this server enforces "
                          "only with tool_choice \"required\" or a named function, not \"auto\"");
  }
}

}  // namespace

std::string ToolChoiceSchema(const Json& tools, const ToolChoice& choice, bool parallel_tool_calls) {
  if (choice.mode == ToolChoiceMode::kRequired) return RequiredSchema(tools, parallel_tool_calls).dump();
  if (choice.mode != ToolChoiceMode::kFunction) return "";
  for (const Json& tool : tools) {
    if (tool["function"]["name"] == choice.function_name) return ParametersOf(tool).dump();
  }
  return "";  // not reached: the request's reader checked the name
}

void ApplyToolChoiceConstraint(FieldReader& reader, ChatCompletionRequest* request) {
  const ToolChoiceMode mode = request->tool_choice.mode;
  if (mode == ToolChoiceMode::kAuto) return RefuseStrictTools(reader, request->input.tools);
  if (mode != ToolChoiceMode::kRequired && mode != ToolChoiceMode::kFunction) return;
  OutputConstraint& constraint = request->params.constraint;
  if (constraint.kind != OutputConstraintKind::kNone) {
    return reader.Require(false, constraint.param,
                          constraint.param + " cannot be combined with tool_choice \"required\" or a named "
                          "function, which constrain the output themselves");
  }
  constraint.kind = OutputConstraintKind::kJsonSchema;
  constraint.text = ToolChoiceSchema(request->input.tools, request->tool_choice, request->parallel_tool_calls);
  constraint.param = "tool_choice";
}

}  // namespace surge::api
