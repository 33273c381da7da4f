#include "engine/constraint/json_schema_compiler.h"

#include <algorithm>
#include <set>

#include "base/json_depth.h"
#include "engine/constraint/json_schema_internal.h"

namespace surge {
namespace {

// Keywords that only annotate: accepted and ignored.
const std::set<std::string>& Annotations() {
  static const std::set<std::string> k = {"description", "title", "default", "examples",
                                          "$schema", "$id", "$comment", "deprecated",
                                          "readOnly", "writeOnly", "$defs", "definitions"};
  return k;
}

const std::set<std::string>& Supported() {
  static const std::set<std::string> k = {
      "type", "properties", "required", "additionalProperties", "enum", "const", "items",
      "minItems", "maxItems", "anyOf", "oneOf", "allOf", "$ref", "minLength", "maxLength",
      "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  return k;
}

// Keywords that say what the value is (as opposed to annotations and combinators).
bool HasShapeKeyword(const SchemaJson& schema, const std::string& except) {
  for (const auto& [key, value] : schema.items()) {
    if (key != except && !Annotations().count(key) && Supported().count(key)) return true;
  }
  return false;
}

bool HasAny(const SchemaJson& schema, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (schema.contains(key)) return true;
  }
  return false;
}

}  // namespace

Status SchemaCompiler::Error(const std::string& what, const std::string& path) const {
  return InvalidArgumentError("json_schema: " + what + " (at " + path + ")");
}

Status SchemaCompiler::CheckKeywords(const SchemaJson& schema, const std::string& path) const {
  for (const auto& [key, value] : schema.items()) {
    if (!Annotations().count(key) && !Supported().count(key)) {
      return Error("keyword '" + key + "' is not supported", path);
    }
  }
  return OkStatus();
}

StatusOr<Grammar> SchemaCompiler::Run() {
  RuleId root = g_.AddRule("root");
  ASSIGN_OR_RETURN(ExprId body, Compile(root_, 0, "#"));
  g_.SetBody(root, body);
  g_.set_root(root);
  return std::move(g_);
}

StatusOr<ExprId> SchemaCompiler::Compile(const SchemaJson& schema, int32_t depth,
                                         const std::string& path) {
  if (depth > limits_.max_schema_depth) {
    return Error("schemas nest deeper than " + std::to_string(limits_.max_schema_depth), path);
  }
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return json_.AnyValue(limits_.max_json_nesting);
    return Error("schema 'false' matches nothing", path);
  }
  if (!schema.is_object()) return Error("a schema must be an object or a boolean", path);
  RETURN_IF_ERROR(CheckKeywords(schema, path));
  if (schema.contains("$ref")) {
    if (HasShapeKeyword(schema, "$ref")) return Error("keyword '$ref' with sibling keywords is not supported", path);
    if (!schema["$ref"].is_string()) return Error("'$ref' must be a string", path);
    return CompileRef(schema["$ref"].get<std::string>(), depth, path);
  }
  if (schema.contains("const")) return g_.Literal(schema["const"].dump());
  if (schema.contains("enum")) return CompileEnum(schema, path);
  for (const char* keyword : {"anyOf", "oneOf", "allOf"}) {
    if (!schema.contains(keyword)) continue;
    if (HasShapeKeyword(schema, keyword)) {
      return Error(std::string("keyword '") + keyword + "' with sibling keywords is not supported", path);
    }
    return CompileAlternatives(schema, keyword, depth, path);
  }
  return CompileTypes(schema, depth, path);
}

StatusOr<ExprId> SchemaCompiler::CompileTypes(const SchemaJson& schema, int32_t depth,
                                              const std::string& path) {
  std::vector<std::string> types;
  if (schema.contains("type")) {
    const SchemaJson& type = schema["type"];
    if (type.is_string()) types.push_back(type.get<std::string>());
    for (const SchemaJson& t : type.is_array() ? type : SchemaJson::array()) {
      if (!t.is_string()) return Error("'type' must be a string or a list of strings", path);
      types.push_back(t.get<std::string>());
    }
    if (types.empty()) return Error("'type' must be a string or a non-empty list of strings", path);
  } else if (HasAny(schema, {"properties", "required", "additionalProperties"})) {
    types = {"object"};
  } else if (HasAny(schema, {"items", "minItems", "maxItems"})) {
    types = {"array"};
  } else if (HasAny(schema, {"minLength", "maxLength", "pattern", "format"})) {
    types = {"string"};
  } else if (HasAny(schema, {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) {
    types = {"number"};
  } else {
    return json_.AnyValue(limits_.max_json_nesting);
  }
  std::vector<ExprId> alts;
  for (const std::string& type : types) {
    ASSIGN_OR_RETURN(ExprId e, CompileType(type, schema, depth, path));
    alts.push_back(e);
  }
  return g_.Alt(std::move(alts));
}

StatusOr<ExprId> SchemaCompiler::CompileType(const std::string& type, const SchemaJson& schema,
                                             int32_t depth, const std::string& path) {
  if (type == "object") return CompileObject(schema, depth, path);
  if (type == "array") return CompileArray(schema, depth, path);
  if (type == "string") return CompileString(schema, path);
  if (type == "integer") return CompileInteger(schema, path);
  if (type == "number") return CompileNumber(schema, path);
  if (type == "boolean") return json_.Boolean();
  if (type == "null") return json_.Null();
  return Error("unknown type '" + type + "'", path);
}

StatusOr<ExprId> SchemaCompiler::CompileAlternatives(const SchemaJson& schema, const char* keyword,
                                                     int32_t depth, const std::string& path) {
  const SchemaJson& list = schema[keyword];
  if (!list.is_array() || list.empty()) return Error(std::string("'") + keyword + "' must be a non-empty list", path);
  if (std::string(keyword) == "allOf" && list.size() != 1) {
    return Error("keyword 'allOf' with more than one schema is not supported", path);
  }
  if (static_cast<int32_t>(list.size()) > limits_.max_enum_values) {
    return Error(std::string("'") + keyword + "' has more than " + std::to_string(limits_.max_enum_values) + " schemas", path);
  }
  std::vector<ExprId> alts;
  for (size_t i = 0; i < list.size(); ++i) {
    ASSIGN_OR_RETURN(ExprId e, Compile(list[i], depth + 1, path + "/" + keyword + "/" + std::to_string(i)));
    alts.push_back(e);
  }
  return g_.Alt(std::move(alts));
}

StatusOr<ExprId> SchemaCompiler::CompileEnum(const SchemaJson& schema, const std::string& path) {
  const SchemaJson& values = schema["enum"];
  if (!values.is_array() || values.empty()) return Error("'enum' must be a non-empty list", path);
  if (static_cast<int32_t>(values.size()) > limits_.max_enum_values) {
    return Error("'enum' has more than " + std::to_string(limits_.max_enum_values) + " values", path);
  }
  std::vector<ExprId> alts;
  for (const SchemaJson& v : values) alts.push_back(g_.Literal(v.dump()));
  return g_.Alt(std::move(alts));
}

// "#", "#/$defs/name", "#/definitions/name" (and deeper JSON pointers into the document).
// Each target becomes one rule, so that recursive schemas stay finite.
StatusOr<ExprId> SchemaCompiler::CompileRef(const std::string& ref, int32_t depth,
                                            const std::string& path) {
  auto it = ref_rules_.find(ref);
  if (it != ref_rules_.end()) return g_.Ref(it->second);
  if (ref.empty() || ref[0] != '#') return Error("$ref '" + ref + "' is not supported (only '#...')", path);
  const SchemaJson* target = nullptr;
  try {
    target = &root_.at(SchemaJson::json_pointer(ref.substr(1)));
  } catch (const std::exception&) {
    return Error("$ref '" + ref + "' does not resolve", path);
  }
  RuleId rule = g_.AddRule("ref " + ref);
  ref_rules_[ref] = rule;
  ASSIGN_OR_RETURN(ExprId body, Compile(*target, depth + 1, ref));
  g_.SetBody(rule, body);
  return g_.Ref(rule);
}

// Properties in schema order. S(i): the rest from property i when none has been written
// yet; R(i): the rest when one has (so the next needs a comma). Each is a rule so that the
// automaton shares them instead of copying (linear in the number of properties).
StatusOr<ExprId> SchemaCompiler::CompileObject(const SchemaJson& schema, int32_t depth,
                                               const std::string& path) {
  static const SchemaJson kEmpty = SchemaJson::object();
  const SchemaJson& props = schema.contains("properties") ? schema["properties"] : kEmpty;
  if (!props.is_object()) return Error("'properties' must be an object", path);
  if (static_cast<int32_t>(props.size()) > limits_.max_properties) {
    return Error("more than " + std::to_string(limits_.max_properties) + " properties", path);
  }
  std::set<std::string> required;
  if (schema.contains("required")) {
    if (!schema["required"].is_array()) return Error("'required' must be a list of strings", path);
    for (const SchemaJson& name : schema["required"]) {
      if (!name.is_string()) return Error("'required' must be a list of strings", path);
      if (!props.contains(name.get<std::string>())) {
        return Error("required property '" + name.get<std::string>() + "' is not in 'properties'", path);
      }
      required.insert(name.get<std::string>());
    }
  }
  std::optional<ExprId> additional;
  if (schema.contains("additionalProperties")) {
    const SchemaJson& extra = schema["additionalProperties"];
    if (!(extra.is_boolean() && !extra.get<bool>())) {
      ASSIGN_OR_RETURN(ExprId value, Compile(extra, depth + 1, path + "/additionalProperties"));
      additional = g_.Seq({json_.String(), json_.Colon(), value});
    }
  }
  std::vector<std::pair<RuleId, bool>> members;  // (rule, required)
  for (const auto& [name, sub] : props.items()) {
    ASSIGN_OR_RETURN(ExprId value, Compile(sub, depth + 1, path + "/properties/" + name));
    RuleId rule = g_.AddRule("property " + name);
    g_.SetBody(rule, g_.Seq({g_.Literal(SchemaJson(name).dump()), json_.Colon(), value}));
    members.push_back({rule, required.count(name) > 0});
  }
  RuleId rest_after = g_.AddRule("rest");   // R(n)
  RuleId rest_first = g_.AddRule("first");  // S(n)
  if (additional) {
    g_.SetBody(rest_after, g_.Star(g_.Seq({json_.Comma(), *additional})));
    g_.SetBody(rest_first, g_.Optional(g_.Seq({*additional, g_.Ref(rest_after)})));
  } else {
    g_.SetBody(rest_after, g_.Empty());
    g_.SetBody(rest_first, g_.Empty());
  }
  for (size_t i = members.size(); i-- > 0;) {
    auto [member, is_required] = members[i];
    ExprId with_comma = g_.Seq({json_.Comma(), g_.Ref(member)});
    ExprId first = g_.Seq({g_.Ref(member), g_.Ref(rest_after)});
    RuleId after = g_.AddRule("rest");
    RuleId before = g_.AddRule("first");
    g_.SetBody(after, g_.Seq({is_required ? with_comma : g_.Optional(with_comma), g_.Ref(rest_after)}));
    g_.SetBody(before, is_required ? first : g_.Alt({first, g_.Ref(rest_first)}));
    rest_after = after;
    rest_first = before;
  }
  return g_.Seq({g_.Byte('{'), g_.Ref(rest_first), g_.Byte('}')});
}

StatusOr<int32_t> SchemaCompiler::Count(const SchemaJson& schema, const char* keyword,
                                        int32_t fallback, const std::string& path) {
  if (!schema.contains(keyword)) return fallback;
  const SchemaJson& v = schema[keyword];
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    return Error(std::string("'") + keyword + "' must be a non-negative integer", path);
  }
  if (v.get<int64_t>() > limits_.max_repeat) {
    return Error(std::string("'") + keyword + "' above the limit of " + std::to_string(limits_.max_repeat), path);
  }
  return static_cast<int32_t>(v.get<int64_t>());
}

StatusOr<ExprId> SchemaCompiler::CompileArray(const SchemaJson& schema, int32_t depth,
                                              const std::string& path) {
  ExprId item = -1;
  if (schema.contains("items")) {
    if (schema["items"].is_array()) return Error("keyword 'items' as a list (tuple) is not supported", path);
    ASSIGN_OR_RETURN(item, Compile(schema["items"], depth + 1, path + "/items"));
  } else {
    item = json_.AnyValue(limits_.max_json_nesting - 1);
  }
  ASSIGN_OR_RETURN(int32_t min, Count(schema, "minItems", 0, path));
  ASSIGN_OR_RETURN(int32_t max, Count(schema, "maxItems", kUnbounded, path));
  if (max != kUnbounded && max < min) return Error("'maxItems' is below 'minItems'", path);
  return g_.Seq({g_.Byte('['), g_.SepRepeat(item, json_.Comma(), min, max), g_.Byte(']')});
}

StatusOr<Grammar> JsonSchemaToGrammar(std::string_view schema_json, const ConstraintLimits& limits,
                                      JsonWhitespace whitespace) {
  if (static_cast<int64_t>(schema_json.size()) > limits.max_text_bytes) {
    return InvalidArgumentError("json_schema: longer than " + std::to_string(limits.max_text_bytes) + " bytes");
  }
  if (!JsonDepthWithin(schema_json, 2 * limits.max_schema_depth + 2)) {
    return InvalidArgumentError("json_schema: nested deeper than " +
                                std::to_string(2 * limits.max_schema_depth + 2) + " levels");
  }
  SchemaJson schema = SchemaJson::parse(schema_json, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return InvalidArgumentError("json_schema: not valid JSON");
  return SchemaCompiler(schema, limits, whitespace).Run();
}

Grammar JsonObjectGrammar(const ConstraintLimits& limits, JsonWhitespace whitespace) {
  Grammar grammar;
  JsonGrammarBuilder json(&grammar, limits, whitespace);
  RuleId root = grammar.AddRule("root");
  grammar.SetBody(root, json.AnyObject(limits.max_json_nesting));
  grammar.set_root(root);
  return grammar;
}

}  // namespace surge
