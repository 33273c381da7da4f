#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/logging.h"
#include "base/utf8.h"

namespace surge {
namespace {

// Per-thread match state shared by every Regex: a one-pair match block (only the whole
// match is needed) and a JIT stack large enough for long runs of whitespace.
struct ThreadMatchState {
  pcre2_match_data* match_data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* jit_stack = pcre2_jit_stack_create(64 * 1024, 16 * 1024 * 1024, nullptr);

  ThreadMatchState() { pcre2_jit_stack_assign(context, nullptr, jit_stack); }
  ~ThreadMatchState() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(match_data);
  }
};

ThreadMatchState& MatchState() {
  thread_local ThreadMatchState state;
  return state;
}

pcre2_code* Code(void* code) { return static_cast<pcre2_code*>(code); }

std::string Pcre2ErrorText(int error_code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(error_code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

StatusOr<std::unique_ptr<Regex>> Regex::FromOniguruma(std::string_view pattern) {
  ASSIGN_OR_RETURN(std::string translated, TranslateOnigurumaToPcre2(pattern));
  return FromPcre2(translated);
}

StatusOr<std::unique_ptr<Regex>> Regex::FromPcre2(std::string_view pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    return InvalidArgumentError("regex '" + std::string(pattern) + "' does not compile at offset " +
                                std::to_string(error_offset) + ": " + Pcre2ErrorText(error_code));
  }
  // Without JIT (unsupported CPU) pcre2_match falls back to the interpreter.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return std::unique_ptr<Regex>(new Regex(code));
}

Regex::~Regex() { pcre2_code_free(Code(code_)); }

bool Regex::Find(std::string_view text, size_t start, MatchSpan* match) const {
  ThreadMatchState& state = MatchState();
  int rc = pcre2_match(Code(code_), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                       PCRE2_NO_UTF_CHECK, state.match_data, state.context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    // Only resource limits get here (a JIT stack of 16 MiB exhausted by pathological
    // backtracking); the rest of the text is then left unsplit rather than crashing.
    LOG(ERROR) << "tokenizer regex match failed: " << Pcre2ErrorText(rc);
    return false;
  }
  // rc == 0 only says the one-pair vector could not hold the groups: still a match.
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.match_data);
  *match = {ovector[0], ovector[1]};
  return true;
}

void Regex::FindAll(std::string_view text, std::vector<MatchSpan>* matches) const {
  size_t start = 0;
  MatchSpan match;
  while (start <= text.size() && Find(text, start, &match)) {
    matches->push_back(match);
    if (match.second > match.first) {
      start = match.second;
    } else if (match.second < text.size()) {
      start = match.second + Utf8SequenceLength(static_cast<uint8_t>(text[match.second]));
    } else {
      break;
    }
  }
}

bool Regex::FullMatch(std::string_view text) const {
  MatchSpan match;
  return Find(text, 0, &match) && match.first == 0 && match.second == text.size();
}

void Pattern::FindAll(std::string_view text, std::vector<MatchSpan>* matches) const {
  if (regex_ != nullptr) {
    regex_->FindAll(text, matches);
    return;
  }
  if (literal_.empty()) return;
  for (size_t pos = text.find(literal_); pos != std::string_view::npos;
       pos = text.find(literal_, pos + literal_.size())) {
    matches->emplace_back(pos, pos + literal_.size());
  }
}

std::string Pattern::ReplaceAll(std::string_view text, std::string_view content) const {
  if (regex_ == nullptr) return surge::ReplaceAll(text, literal_, content);
  std::vector<MatchSpan> matches;
  regex_->FindAll(text, &matches);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (const MatchSpan& match : matches) {
    out.append(text.substr(pos, match.first - pos));
    out.append(content);
    pos = match.second;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace surge
