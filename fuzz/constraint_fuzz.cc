// libFuzzer target: the structured-output compilers of engine/constraint (JSON schema,
// regex, choice, GBNF) on untrusted text, then the matcher over the rest of the input.
// Byte 0 picks the kind; the text runs to the first NUL, the bytes after it are fed to a
// matcher of the compiled grammar. Any input may be refused; none may crash, exceed the
// limits or leave the matcher inconsistent.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/constraint/constraint.h"
#include "engine/constraint/matcher.h"

namespace {

// The server's own limits (ConstraintLimits' defaults): smaller ones hid the blow-ups of
// issue 31 (an 11-byte regex compiling for a minute). Every compile must stay within its
// step budget and automaton bytes, however it ends.
surge::ConstraintLimits FuzzLimits() { return surge::ConstraintLimits(); }

surge::ConstraintSpec SpecFor(uint8_t selector, std::string_view text) {
  surge::ConstraintSpec spec;
  switch (selector % 5) {
    case 0: spec.kind = surge::ConstraintKind::kJsonSchema; break;
    case 1: spec.kind = surge::ConstraintKind::kRegex; break;
    case 2: spec.kind = surge::ConstraintKind::kGrammar; break;
    case 3: spec.kind = surge::ConstraintKind::kJsonObject; break;
    default: {
      spec.kind = surge::ConstraintKind::kChoice;
      size_t start = 0;  // choices separated by newlines
      for (size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == '\n') {
          spec.choices.emplace_back(text.substr(start, i - start));
          start = i + 1;
        }
      }
      return spec;
    }
  }
  spec.text = std::string(text);
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t nul = rest.find('\0');
  const std::string_view text = rest.substr(0, nul);
  const std::string_view output = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  const surge::ConstraintLimits limits = FuzzLimits();
  surge::CompileBudget budget(limits.max_compile_steps);
  auto compiled = surge::CompileConstraint(SpecFor(data[0], text), limits, &budget);
  // One node's edges or one closure past the last check: far below a second budget.
  if (budget.steps() > 2 * limits.max_compile_steps) __builtin_trap();
  if (!compiled.ok()) {
    if (compiled.status().message().empty()) __builtin_trap();  // errors must say why
    return 0;
  }
  if ((*compiled)->memory_bytes() > limits.max_automaton_bytes) __builtin_trap();
  surge::Matcher matcher(*compiled);
  for (unsigned char byte : output) {
    const surge::MatcherState before = matcher.state();
    if (!matcher.Accept(byte) && !(matcher.state() == before)) __builtin_trap();  // refusal keeps the state
    if (matcher.IsComplete() && !matcher.CanEnd()) __builtin_trap();  // a dead end is never reachable
  }
  return 0;
}
