#include "tokenizer/gguf_vocab_io.h"

#include <algorithm>
#include <climits>
#include <utility>

namespace surge {
namespace {

// Reads `key` with `get` when present; leaves `out` alone when absent. A present key of
// the wrong type is an error (the getters name the key and both types).
template <typename T, typename Getter>
Status ReadOptional(const GgufFile& file, std::string_view key, Getter get, T* out) {
  if (!file.Has(key)) return OkStatus();
  ASSIGN_OR_RETURN(*out, (file.*get)(key));
  return OkStatus();
}

template <typename Getter>
Status ReadOptionalId(const GgufFile& file, std::string_view key, Getter get, std::optional<int64_t>* out) {
  if (!file.Has(key)) return OkStatus();
  ASSIGN_OR_RETURN(int64_t value, (file.*get)(key));
  *out = value;
  return OkStatus();
}

Status ReadOptionalBool(const GgufFile& file, std::string_view key, std::optional<bool>* out) {
  if (!file.Has(key)) return OkStatus();
  ASSIGN_OR_RETURN(bool value, file.GetBool(key));
  *out = value;
  return OkStatus();
}

// tokenizer.ggml.scores: f32 as gguf-py writes it, or i32 (which llama.cpp also reads).
Status ReadScores(const GgufFile& file, std::vector<float>* scores) {
  constexpr std::string_view kKey = "tokenizer.ggml.scores";
  const GgufValue* value = file.Find(kKey);
  if (value == nullptr) return OkStatus();
  if (value->type == GgufValueType::kArray && value->array_type == GgufValueType::kI32) {
    ASSIGN_OR_RETURN(std::vector<int64_t> ints, file.GetIntArray(kKey));
    scores->assign(ints.begin(), ints.end());
    return OkStatus();
  }
  ASSIGN_OR_RETURN(*scores, file.GetFloatArray(kKey));
  return OkStatus();
}

Status CheckLength(std::string_view key, size_t size, size_t num_tokens) {
  if (size == 0 || size == num_tokens) return OkStatus();
  return InvalidArgumentError(std::string(key) + " has " + std::to_string(size) +
                              " entries but tokenizer.ggml.tokens has " + std::to_string(num_tokens));
}

Status Read(const GgufFile& file, GgufVocab* vocab) {
  ASSIGN_OR_RETURN(vocab->model, file.GetString("tokenizer.ggml.model"));
  ASSIGN_OR_RETURN(vocab->tokens, file.GetStringArray("tokenizer.ggml.tokens"));
  RETURN_IF_ERROR(ReadOptional(file, "tokenizer.ggml.pre", &GgufFile::GetString, &vocab->pre));
  RETURN_IF_ERROR(ReadScores(file, &vocab->scores));
  std::vector<int64_t> types;
  RETURN_IF_ERROR(ReadOptional(file, "tokenizer.ggml.token_type", &GgufFile::GetIntArray, &types));
  for (int64_t type : types) vocab->token_types.push_back(static_cast<int32_t>(std::clamp<int64_t>(type, INT32_MIN, INT32_MAX)));
  RETURN_IF_ERROR(CheckLength("tokenizer.ggml.scores", vocab->scores.size(), vocab->tokens.size()));
  RETURN_IF_ERROR(CheckLength("tokenizer.ggml.token_type", vocab->token_types.size(), vocab->tokens.size()));
  RETURN_IF_ERROR(ReadOptional(file, "tokenizer.ggml.merges", &GgufFile::GetStringArray, &vocab->merges));
  RETURN_IF_ERROR(ReadOptionalId(file, "tokenizer.ggml.bos_token_id", &GgufFile::GetInt, &vocab->bos_token_id));
  RETURN_IF_ERROR(ReadOptionalId(file, "tokenizer.ggml.eos_token_id", &GgufFile::GetInt, &vocab->eos_token_id));
  RETURN_IF_ERROR(
      ReadOptionalId(file, "tokenizer.ggml.unknown_token_id", &GgufFile::GetInt, &vocab->unknown_token_id));
  RETURN_IF_ERROR(
      ReadOptionalId(file, "tokenizer.ggml.padding_token_id", &GgufFile::GetInt, &vocab->padding_token_id));
  RETURN_IF_ERROR(ReadOptionalId(file, "tokenizer.ggml.eot_token_id", &GgufFile::GetInt, &vocab->eot_token_id));
  RETURN_IF_ERROR(ReadOptionalId(file, "tokenizer.ggml.eom_token_id", &GgufFile::GetInt, &vocab->eom_token_id));
  RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.add_bos_token", &vocab->add_bos_token));
  RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.add_eos_token", &vocab->add_eos_token));
  RETURN_IF_ERROR(ReadOptionalBool(file, "tokenizer.ggml.add_space_prefix", &vocab->add_space_prefix));
  RETURN_IF_ERROR(ReadOptional(file, "tokenizer.chat_template", &GgufFile::GetString, &vocab->chat_template));
  return OkStatus();
}

}  // namespace

StatusOr<GgufVocab> ReadGgufVocab(const GgufFile& file) {
  GgufVocab vocab;
  if (Status status = Read(file, &vocab); !status.ok()) return status.WithContext(file.path());
  return vocab;
}

void WriteGgufVocab(const GgufVocab& vocab, GgufWriter* writer) {
  writer->SetString("tokenizer.ggml.model", vocab.model);
  if (!vocab.pre.empty()) writer->SetString("tokenizer.ggml.pre", vocab.pre);
  writer->SetStringArray("tokenizer.ggml.tokens", vocab.tokens);
  if (!vocab.scores.empty()) writer->SetF32Array("tokenizer.ggml.scores", vocab.scores);
  if (!vocab.token_types.empty()) writer->SetI32Array("tokenizer.ggml.token_type", vocab.token_types);
  if (!vocab.merges.empty()) writer->SetStringArray("tokenizer.ggml.merges", vocab.merges);
  const std::pair<const char*, const std::optional<int64_t>*> ids[] = {
      {"tokenizer.ggml.bos_token_id", &vocab.bos_token_id},
      {"tokenizer.ggml.eos_token_id", &vocab.eos_token_id},
      {"tokenizer.ggml.unknown_token_id", &vocab.unknown_token_id},
      {"tokenizer.ggml.padding_token_id", &vocab.padding_token_id},
      {"tokenizer.ggml.eot_token_id", &vocab.eot_token_id},
      {"tokenizer.ggml.eom_token_id", &vocab.eom_token_id},
  };
  for (const auto& [key, id] : ids) {
    if (*id) writer->SetU32(key, static_cast<uint32_t>(**id));
  }
  const std::pair<const char*, const std::optional<bool>*> flags[] = {
      {"tokenizer.ggml.add_bos_token", &vocab.add_bos_token},
      {"tokenizer.ggml.add_eos_token", &vocab.add_eos_token},
      {"tokenizer.ggml.add_space_prefix", &vocab.add_space_prefix},
  };
  for (const auto& [key, flag] : flags) {
    if (*flag) writer->SetBool(key, **flag);
  }
  if (!vocab.chat_template.empty()) writer->SetString("tokenizer.chat_template", vocab.chat_template);
}

StatusOr<std::unique_ptr<Tokenizer>> TokenizerFromGguf(const GgufFile& file) {
  ASSIGN_OR_RETURN(GgufVocab vocab, ReadGgufVocab(file));
  return Tokenizer::FromGgufVocab(vocab, file.path());
}

}  // namespace surge
