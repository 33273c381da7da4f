#include "engine/constraint/constraint.h"

#include "engine/constraint/gbnf_parser.h"
#include "engine/constraint/json_schema_compiler.h"
#include "engine/constraint/regex_compiler.h"

namespace surge {

StatusOr<Grammar> ChoiceGrammar(const std::vector<std::string>& choices,
                                const ConstraintLimits& limits) {
  if (choices.empty()) return InvalidArgumentError("choice: the list of choices is empty");
  if (static_cast<int32_t>(choices.size()) > limits.max_enum_values) {
    return InvalidArgumentError("choice: more than " + std::to_string(limits.max_enum_values) + " choices");
  }
  int64_t total_bytes = 0;
  for (const std::string& c : choices) total_bytes += static_cast<int64_t>(c.size());
  if (total_bytes > limits.max_text_bytes) {
    return InvalidArgumentError("choice: longer than " + std::to_string(limits.max_text_bytes) + " bytes in all");
  }
  Grammar grammar;
  std::vector<ExprId> alts;
  for (const std::string& c : choices) alts.push_back(grammar.Literal(c));
  RuleId root = grammar.AddRule("root");
  grammar.SetBody(root, grammar.Alt(std::move(alts)));
  grammar.set_root(root);
  return grammar;
}

StatusOr<Grammar> BuildConstraintGrammar(const ConstraintSpec& spec, const ConstraintLimits& limits) {
  switch (spec.kind) {
    case ConstraintKind::kJsonSchema: return JsonSchemaToGrammar(spec.text, limits, spec.whitespace);
    case ConstraintKind::kJsonObject: return JsonObjectGrammar(limits, spec.whitespace);
    case ConstraintKind::kRegex: return RegexToGrammar(spec.text, limits);
    case ConstraintKind::kChoice: return ChoiceGrammar(spec.choices, limits);
    case ConstraintKind::kGrammar: return GbnfToGrammar(spec.text, limits);
  }
  return InvalidArgumentError("constraint: unknown kind");
}

StatusOr<std::shared_ptr<const CompiledGrammar>> CompileConstraint(const ConstraintSpec& spec,
                                                                  const ConstraintLimits& limits,
                                                                  CompileBudget* budget) {
  ASSIGN_OR_RETURN(Grammar grammar, BuildConstraintGrammar(spec, limits));
  return CompileGrammar(grammar, limits, budget);
}

std::string ConstraintCacheKey(const ConstraintSpec& spec) {
  std::string key = std::to_string(static_cast<int>(spec.kind)) + "/" +
                    std::to_string(static_cast<int>(spec.whitespace)) + "/";
  if (spec.kind != ConstraintKind::kChoice) return key + spec.text;
  for (const std::string& c : spec.choices) key += std::to_string(c.size()) + ":" + c;
  return key;
}

}  // namespace surge
