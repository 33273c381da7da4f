// Post-processors: add the special tokens of the model's template (BOS, CLS/SEP) around
// the encoded ids (tokenizer.json "post_processor"), single sequences only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace surge {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Rewrites `ids` (the encoded text) in place; no-op for specials without
  // `add_special_tokens`.
  virtual void Process(bool add_special_tokens, std::vector<int32_t>* ids) const = 0;
  // Ids this processor puts in front of the text (with add_special_tokens).
  virtual std::vector<int32_t> PrefixIds() const = 0;
};

// One element of a TemplateProcessing "single" template: special ids or the text ("A").
struct TemplatePiece {
  bool is_sequence = false;
  std::vector<int32_t> special_ids;
};

std::unique_ptr<PostProcessor> MakeTemplatePostProcessor(std::vector<TemplatePiece> single);
// RobertaProcessing and BertProcessing: <cls> text <sep>.
std::unique_ptr<PostProcessor> MakeClsSepPostProcessor(int32_t cls_id, int32_t sep_id);
// ByteLevel (offsets only) and anything else that leaves ids alone.
std::unique_ptr<PostProcessor> MakeIdentityPostProcessor();
std::unique_ptr<PostProcessor> MakeSequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> steps);

}  // namespace surge
