#include "tokenizer/post_processor.h"

namespace surge {
namespace {

class TemplatePostProcessor : public PostProcessor {
 public:
  explicit TemplatePostProcessor(std::vector<TemplatePiece> single) : single_(std::move(single)) {}
  void Process(bool add_special_tokens, std::vector<int32_t>* ids) const override {
    std::vector<int32_t> out;
    out.reserve(ids->size() + 4);
    for (const TemplatePiece& piece : single_) {
      if (piece.is_sequence) {
        out.insert(out.end(), ids->begin(), ids->end());
      } else if (add_special_tokens) {
        out.insert(out.end(), piece.special_ids.begin(), piece.special_ids.end());
      }
    }
    ids->swap(out);
  }
  std::vector<int32_t> PrefixIds() const override {
    std::vector<int32_t> prefix;
    for (const TemplatePiece& piece : single_) {
      if (piece.is_sequence) break;
      prefix.insert(prefix.end(), piece.special_ids.begin(), piece.special_ids.end());
    }
    return prefix;
  }

 private:
  std::vector<TemplatePiece> single_;
};

class ClsSepPostProcessor : public PostProcessor {
 public:
  ClsSepPostProcessor(int32_t cls_id, int32_t sep_id) : cls_id_(cls_id), sep_id_(sep_id) {}
  void Process(bool add_special_tokens, std::vector<int32_t>* ids) const override {
    if (!add_special_tokens) return;
    ids->insert(ids->begin(), cls_id_);
    ids->push_back(sep_id_);
  }
  std::vector<int32_t> PrefixIds() const override { return {cls_id_}; }

 private:
  int32_t cls_id_;
  int32_t sep_id_;
};

class IdentityPostProcessor : public PostProcessor {
 public:
  void Process(bool add_special_tokens, std::vector<int32_t>* ids) const override {}
  std::vector<int32_t> PrefixIds() const override { return {}; }
};

class SequencePostProcessor : public PostProcessor {
 public:
  explicit SequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> steps)
      : steps_(std::move(steps)) {}
  void Process(bool add_special_tokens, std::vector<int32_t>* ids) const override {
    for (const auto& step : steps_) step->Process(add_special_tokens, ids);
  }
  std::vector<int32_t> PrefixIds() const override {
    std::vector<int32_t> prefix;
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      std::vector<int32_t> step_prefix = (*it)->PrefixIds();
      prefix.insert(prefix.begin(), step_prefix.begin(), step_prefix.end());
    }
    return prefix;
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

}  // namespace

std::unique_ptr<PostProcessor> MakeTemplatePostProcessor(std::vector<TemplatePiece> single) {
  return std::make_unique<TemplatePostProcessor>(std::move(single));
}

std::unique_ptr<PostProcessor> MakeClsSepPostProcessor(int32_t cls_id, int32_t sep_id) {
  return std::make_unique<ClsSepPostProcessor>(cls_id, sep_id);
}

std::unique_ptr<PostProcessor> MakeIdentityPostProcessor() {
  return std::make_unique<IdentityPostProcessor>();
}

std::unique_ptr<PostProcessor> MakeSequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> steps) {
  return std::make_unique<SequencePostProcessor>(std::move(steps));
}

}  // namespace surge
