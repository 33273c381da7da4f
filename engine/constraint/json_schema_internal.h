// SchemaCompiler: the state of one JSON Schema compilation. Internal to engine/constraint/;
// json_schema_compiler.cc holds the structure (objects, arrays, combinators, $ref) and
// json_schema_scalars.cc the leaves (strings, formats, numbers, integer ranges).
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/json_grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

using SchemaJson = nlohmann::ordered_json;

class SchemaCompiler {
 public:
  SchemaCompiler(const SchemaJson& root, const ConstraintLimits& limits, JsonWhitespace whitespace)
      : root_(root), limits_(limits), json_(&g_, limits, whitespace) {}

  StatusOr<Grammar> Run();

 private:
  StatusOr<ExprId> Compile(const SchemaJson& schema, int32_t depth, const std::string& path);
  StatusOr<ExprId> CompileTypes(const SchemaJson& schema, int32_t depth, const std::string& path);
  StatusOr<ExprId> CompileType(const std::string& type, const SchemaJson& schema, int32_t depth,
                               const std::string& path);
  StatusOr<ExprId> CompileAlternatives(const SchemaJson& schema, const char* keyword,
                                       int32_t depth, const std::string& path);
  StatusOr<ExprId> CompileEnum(const SchemaJson& schema, const std::string& path);
  StatusOr<ExprId> CompileRef(const std::string& ref, int32_t depth, const std::string& path);
  StatusOr<ExprId> CompileObject(const SchemaJson& schema, int32_t depth, const std::string& path);
  StatusOr<ExprId> CompileArray(const SchemaJson& schema, int32_t depth, const std::string& path);
  StatusOr<ExprId> CompileString(const SchemaJson& schema, const std::string& path);
  StatusOr<ExprId> CompileFormat(const std::string& format, const std::string& path);
  StatusOr<ExprId> CompileInteger(const SchemaJson& schema, const std::string& path);
  StatusOr<ExprId> CompileNumber(const SchemaJson& schema, const std::string& path);
  StatusOr<int32_t> Count(const SchemaJson& schema, const char* keyword, int32_t fallback,
                          const std::string& path);
  Status CheckKeywords(const SchemaJson& schema, const std::string& path) const;
  Status Error(const std::string& what, const std::string& path) const;

  const SchemaJson& root_;
  const ConstraintLimits& limits_;
  Grammar g_;
  JsonGrammarBuilder json_;
  std::map<std::string, RuleId> ref_rules_;  // by $ref target
};

// Integers lo..hi (either may be absent) as JSON text, at most kMaxIntegerDigits digits.
ExprId IntegerRange(Grammar* grammar, std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace surge
