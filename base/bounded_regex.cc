#include "base/bounded_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace surge {
namespace {

pcre2_code* Code(void* code) { return static_cast<pcre2_code*>(code); }

std::string ErrorText(int error_code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(error_code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

// Owners of PCRE2's contexts and match data for one call.
struct CompileContext {
  pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
  ~CompileContext() { pcre2_compile_context_free(context); }
};
struct MatchState {
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_match_data* data = nullptr;
  ~MatchState() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<BoundedRegex>> BoundedRegex::Compile(std::string_view pattern, const RegexLimits& limits) {
  if (pattern.size() > limits.max_pattern_bytes) {
    return InvalidArgumentError("regex of " + std::to_string(pattern.size()) + " bytes: longer than the limit of " +
                                std::to_string(limits.max_pattern_bytes));
  }
  CompileContext compile;
  if (compile.context == nullptr) return ResourceExhaustedError("regex: out of memory");
  pcre2_set_max_pattern_length(compile.context, limits.max_pattern_bytes);
  pcre2_set_parens_nest_limit(compile.context, limits.max_paren_nesting);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  // Anchored at both ends: a whole-value match, as PromQL's label matchers are.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED,
                                   &error_code, &error_offset, compile.context);
  if (code == nullptr) {
    return InvalidArgumentError("regex does not compile at offset " + std::to_string(error_offset) + ": " +
                                ErrorText(error_code));
  }
  return std::unique_ptr<BoundedRegex>(new BoundedRegex(code, std::string(pattern), limits));
}

BoundedRegex::~BoundedRegex() { pcre2_code_free(Code(code_)); }

StatusOr<bool> BoundedRegex::FullMatch(std::string_view text) const {
  MatchState state;
  state.data = pcre2_match_data_create_from_pattern(Code(code_), nullptr);
  if (state.context == nullptr || state.data == nullptr) return ResourceExhaustedError("regex: out of memory");
  pcre2_set_match_limit(state.context, limits_.match_limit);
  pcre2_set_depth_limit(state.context, limits_.depth_limit);
  pcre2_set_heap_limit(state.context, limits_.heap_limit_kib);
  // The interpreter, not the JIT: the JIT ignores the depth and heap limits.
  const int rc = pcre2_match(Code(code_), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, state.data,
                             state.context);
  if (rc >= 0) return true;
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  return ResourceExhaustedError("regex '" + pattern_.substr(0, 64) + "': " + ErrorText(rc));
}

}  // namespace surge
