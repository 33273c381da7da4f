#include "api/output_constraint.h"

#include <utility>

namespace surge::api {
namespace {

constexpr char kResponseFormat[] = "response_format";

// {"name": ..., "schema": {...}, "strict": bool, "description": ...}; no schema: any object.
void ReadJsonSchemaFormat(FieldReader& reader, const Json& format, OutputConstraint* out) {
  const Json* spec = format.contains("json_schema") ? &format["json_schema"] : nullptr;
  if (spec == nullptr || !spec->is_object()) {
    return reader.Require(false, kResponseFormat,
                          "response_format.json_schema must be an object when type is json_schema");
  }
  FieldReader inner(*spec);
  std::string name, description;
  bool strict = false;
  inner.String("name", &name);
  inner.String("description", &description);
  inner.Bool("strict", &strict);  // strict or not, the output is held to the schema
  const Json* schema = inner.Find("schema");
  inner.RefuseUnread({});
  if (inner.failed()) {
    return reader.Require(false, kResponseFormat, "response_format.json_schema: " + inner.error().status.message());
  }
  reader.Require(!name.empty(), kResponseFormat, "response_format.json_schema.name is required");
  if (schema == nullptr) {
    out->kind = OutputConstraintKind::kJsonObject;
    return;
  }
  reader.Require(schema->is_object(), kResponseFormat, "response_format.json_schema.schema must be an object");
  out->kind = OutputConstraintKind::kJsonSchema;
  out->text = schema->dump();
}

// Returns whether it constrains the output.
bool ReadResponseFormat(FieldReader& reader, OutputConstraint* out) {
  const Json* format = reader.Find(kResponseFormat);
  if (format == nullptr) return false;
  const Json* type = format->is_object() && format->contains("type") ? &(*format)["type"] : nullptr;
  if (type == nullptr || !type->is_string()) {
    reader.Require(false, kResponseFormat, "response_format must be an object with a string type");
    return false;
  }
  for (const auto& [key, value] : format->items()) {
    if (key != "type" && key != "json_schema") {
      reader.Require(false, kResponseFormat, "response_format." + key + " is not a supported field");
    }
  }
  out->param = kResponseFormat;
  if (*type == "text") return false;
  if (*type == "json_object") {
    out->kind = OutputConstraintKind::kJsonObject;
  } else if (*type == "json_schema") {
    ReadJsonSchemaFormat(reader, *format, out);
  } else {
    reader.Require(false, kResponseFormat, "response_format.type must be one of text, json_object, json_schema");
  }
  return true;
}

// guided_json: a schema object, or the schema as a JSON string (the compiler parses it).
bool ReadGuidedJson(FieldReader& reader, OutputConstraint* out) {
  const Json* value = reader.Find("guided_json");
  if (value == nullptr) return false;
  if (value->is_object()) {
    out->text = value->dump();
  } else if (value->is_string()) {
    out->text = value->get<std::string>();
  } else {
    reader.Require(false, "guided_json", "guided_json must be a JSON schema (an object or a JSON string), got " +
                                             JsonTypeName(*value));
  }
  out->kind = OutputConstraintKind::kJsonSchema;
  out->param = "guided_json";
  return true;
}

bool ReadGuidedString(FieldReader& reader, const char* name, OutputConstraintKind kind, OutputConstraint* out) {
  if (!reader.Has(name)) return false;
  if (!reader.String(name, &out->text)) return true;  // the type error is kept
  out->kind = kind;
  out->param = name;
  return true;
}

bool ReadGuidedChoice(FieldReader& reader, OutputConstraint* out) {
  const Json* value = reader.Find("guided_choice");
  if (value == nullptr) return false;
  out->kind = OutputConstraintKind::kChoice;
  out->param = "guided_choice";
  bool strings = value->is_array() && !value->empty();
  for (size_t i = 0; strings && i < value->size(); ++i) {
    strings = (*value)[i].is_string();
    if (strings) out->choices.push_back((*value)[i].get<std::string>());
  }
  reader.Require(strings, "guided_choice", "guided_choice must be a non-empty list of strings");
  return true;
}

}  // namespace

void ReadOutputConstraint(FieldReader& reader, OutputConstraint* constraint) {
  // Each reader fills a fresh candidate so that a second constraint is reported, not merged.
  std::vector<std::string> given;
  OutputConstraint candidate;
  const auto take = [&](bool constrains) {
    if (!constrains) return;
    given.push_back(candidate.param);
    if (given.size() == 1) *constraint = std::move(candidate);
    candidate = OutputConstraint();
  };
  take(ReadResponseFormat(reader, &candidate));
  take(ReadGuidedJson(reader, &candidate));
  take(ReadGuidedString(reader, "guided_regex", OutputConstraintKind::kRegex, &candidate));
  take(ReadGuidedChoice(reader, &candidate));
  take(ReadGuidedString(reader, "guided_grammar", OutputConstraintKind::kGrammar, &candidate));
  if (given.size() > 1) {
    reader.Require(false, given[1], "at most one output constraint per request: got both " + given[0] + " and " +
                                        given[1]);
  }
  // vLLM's whitespace override: the JSON grammars fix their own whitespace (see README).
  reader.Require(!reader.Has("guided_whitespace_pattern"), "guided_whitespace_pattern",
                 "guided_whitespace_pattern is not supported (JSON output has no whitespace but one space after "
                 "':' and ',')");
}

}  // namespace surge::api
