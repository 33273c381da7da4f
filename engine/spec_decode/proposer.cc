#include "engine/spec_decode/proposer.h"

namespace surge {

std::string_view SpeculativeMethodName(SpeculativeMethod method) {
  switch (method) {
    case SpeculativeMethod::kNone: return "none";
    case SpeculativeMethod::kNgram: return "ngram";
    case SpeculativeMethod::kDraft: return "draft";
    case SpeculativeMethod::kMtp: return "mtp";
  }
  return "none";
}

StatusOr<SpeculativeMethod> ParseSpeculativeMethod(std::string_view name) {
  for (SpeculativeMethod method : {SpeculativeMethod::kNone, SpeculativeMethod::kNgram,
                                   SpeculativeMethod::kDraft, SpeculativeMethod::kMtp}) {
    if (name == SpeculativeMethodName(method)) return method;
  }
  return InvalidArgumentError("unknown speculative method '" + std::string(name) +
                              "' (expected none, ngram, draft or mtp)");
}

}  // namespace surge
