#include "tokenizer/gguf_to_hf_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "tokenizer/gguf_pre_tokenizer.h"

namespace surge {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kMetaspace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

GgufTokenType TypeOf(const GgufVocab& vocab, size_t id) {
  return id < vocab.token_types.size() ? static_cast<GgufTokenType>(vocab.token_types[id]) : GgufTokenType::kNormal;
}

bool IsAdded(GgufTokenType type) {
  return type == GgufTokenType::kControl || type == GgufTokenType::kUnknown || type == GgufTokenType::kUserDefined;
}

Json AddedTokens(const GgufVocab& vocab) {
  Json added = Json::array();
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const GgufTokenType type = TypeOf(vocab, id);
    if (!IsAdded(type)) continue;
    added.push_back({{"id", id}, {"content", vocab.tokens[id]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", type != GgufTokenType::kUserDefined}});
  }
  return added;
}

// {token: id} in id order; a repeated text keeps its first id. Appended to the ordered
// map's vector directly: its own insert looks each key up linearly (49k tokens squared).
Json VocabObject(const GgufVocab& vocab) {
  Json object = Json::object();
  auto& items = static_cast<Json::object_t::Container&>(object.get_ref<Json::object_t&>());
  std::unordered_set<std::string_view> seen;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (seen.insert(vocab.tokens[id]).second) items.emplace_back(vocab.tokens[id], id);
  }
  return object;
}

// SentencePiece merges from scores: every split of a normal token into two tokens, ranked by
// the whole token's score (highest first), then by the token's id and the split point.
Json MergesFromScores(const GgufVocab& vocab) {
  std::unordered_map<std::string, size_t> ids;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) ids.emplace(vocab.tokens[id], id);
  std::vector<std::tuple<float, size_t, size_t>> merges;  // (-score, token id, split byte)
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (TypeOf(vocab, id) != GgufTokenType::kNormal) continue;
    const std::string& text = vocab.tokens[id];
    for (size_t split = 1; split < text.size(); ++split) {
      if ((static_cast<unsigned char>(text[split]) & 0xC0) == 0x80) continue;  // inside a character
      if (ids.count(text.substr(0, split)) && ids.count(text.substr(split))) {
        merges.emplace_back(-(id < vocab.scores.size() ? vocab.scores[id] : 0.0f), id, split);
      }
    }
  }
  std::sort(merges.begin(), merges.end());
  Json out = Json::array();
  for (const auto& [score, id, split] : merges) {
    out.push_back(vocab.tokens[id].substr(0, split) + " " + vocab.tokens[id].substr(split));
  }
  return out;
}

Json BpeModel(const GgufVocab& vocab, bool spm, bool ignore_merges, std::optional<int64_t> unk_id) {
  Json model = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr},
                {"fuse_unk", spm}, {"byte_fallback", spm}, {"ignore_merges", ignore_merges},
                {"vocab", VocabObject(vocab)}};
  if (spm && unk_id) model["unk_token"] = vocab.tokens[*unk_id];
  model["merges"] = spm ? MergesFromScores(vocab) : Json(vocab.merges);
  return model;
}

Json Gpt2PreTokenizer(const GgufPreTokenizerSpec& spec) {
  Json steps = Json::array();
  for (const std::string& regex : spec.regexes) {
    steps.push_back({{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}});
  }
  steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}});
  return {{"type", "Sequence"}, {"pretokenizers", steps}};
}

Json SpmNormalizer(bool add_space_prefix) {
  Json steps = Json::array();
  if (add_space_prefix) steps.push_back({{"type", "Prepend"}, {"prepend", kMetaspace}});
  steps.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMetaspace}});
  return {{"type", "Sequence"}, {"normalizers", steps}};
}

Json SpmDecoder(bool add_space_prefix) {
  Json steps = {{{"type", "Replace"}, {"pattern", {{"String", kMetaspace}}}, {"content", " "}},
                {{"type", "ByteFallback"}},
                {{"type", "Fuse"}}};
  if (add_space_prefix) steps.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  return {{"type", "Sequence"}, {"decoders", steps}};
}

// BOS / EOS around the text, as add_bos_token / add_eos_token say; null when neither.
Json PostProcessor(const GgufVocab& vocab, bool add_bos, bool add_eos) {
  if (!add_bos && !add_eos) return nullptr;
  Json single = Json::array(), pair = Json::array(), specials = Json::object();
  auto special = [&](int64_t id) {
    const std::string& text = vocab.tokens[id];
    specials[text] = {{"id", text}, {"ids", {id}}, {"tokens", {text}}};
    return Json{{"SpecialToken", {{"id", text}, {"type_id", 0}}}};
  };
  if (add_bos) single.push_back(special(*vocab.bos_token_id));
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  if (add_eos) single.push_back(special(*vocab.eos_token_id));
  pair = single;
  if (add_bos) pair.push_back(special(*vocab.bos_token_id));
  pair.push_back({{"Sequence", {{"id", "B"}, {"type_id", 1}}}});
  if (add_eos) pair.push_back(special(*vocab.eos_token_id));
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", specials}};
}

Json TokenOrNull(const GgufVocab& vocab, std::optional<int64_t> id) {
  return id ? Json(vocab.tokens[*id]) : Json(nullptr);
}

Json TokenizerConfig(const GgufVocab& vocab, bool add_bos, bool add_eos, bool clean_spaces) {
  Json decoder = Json::object();
  for (const Json& token : AddedTokens(vocab)) {
    Json entry = token;
    entry.erase("id");
    decoder[std::to_string(token["id"].get<int64_t>())] = entry;
  }
  Json config = {{"add_bos_token", add_bos}, {"add_eos_token", add_eos},
                 {"added_tokens_decoder", decoder},
                 {"bos_token", TokenOrNull(vocab, vocab.bos_token_id)},
                 {"eos_token", TokenOrNull(vocab, vocab.eos_token_id)},
                 {"unk_token", TokenOrNull(vocab, vocab.unknown_token_id)},
                 {"pad_token", TokenOrNull(vocab, vocab.padding_token_id)},
                 {"clean_up_tokenization_spaces", clean_spaces},
                 {"tokenizer_class", "PreTrainedTokenizerFast"}};
  if (!vocab.chat_template.empty()) config["chat_template"] = vocab.chat_template;
  return config;
}

Status CheckIds(const GgufVocab& vocab) {
  const std::pair<const char*, std::optional<int64_t>> ids[] = {
      {"bos_token_id", vocab.bos_token_id}, {"eos_token_id", vocab.eos_token_id},
      {"unknown_token_id", vocab.unknown_token_id}, {"padding_token_id", vocab.padding_token_id}};
  for (const auto& [key, id] : ids) {
    if (id && (*id < 0 || *id >= static_cast<int64_t>(vocab.tokens.size()))) {
      return InvalidArgumentError(std::string("tokenizer.ggml.") + key + " " + std::to_string(*id) +
                                  " is outside the vocabulary");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<HfTokenizerFiles> HfTokenizerFromGgufVocab(const GgufVocab& vocab) {
  if (vocab.model != "gpt2" && vocab.model != "llama") {
    return UnimplementedError("tokenizer.ggml.model '" + vocab.model + "' does not convert to tokenizer.json (gpt2, llama)");
  }
  RETURN_IF_ERROR(CheckIds(vocab));
  const bool spm = vocab.model == "llama";
  GgufPreTokenizerSpec spec;
  if (!spm) {
    ASSIGN_OR_RETURN(spec, LookUpGgufPreTokenizer(vocab.pre));
  }
  const bool add_bos = vocab.add_bos_token.value_or(spm ? true : spec.add_bos) && vocab.bos_token_id;
  const bool add_eos = vocab.add_eos_token.value_or(false) && vocab.eos_token_id;
  const bool add_space_prefix = vocab.add_space_prefix.value_or(true);
  Json tokenizer = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr},
                    {"added_tokens", AddedTokens(vocab)},
                    {"normalizer", spm ? SpmNormalizer(add_space_prefix) : Json(nullptr)},
                    {"pre_tokenizer", spm ? Json(nullptr) : Gpt2PreTokenizer(spec)},
                    {"post_processor", PostProcessor(vocab, add_bos, add_eos)},
                    {"decoder", spm ? SpmDecoder(add_space_prefix)
                                    : Json{{"type", "ByteLevel"}, {"add_prefix_space", true},
                                           {"trim_offsets", true}, {"use_regex", true}}},
                    {"model", BpeModel(vocab, spm, spec.ignore_merges, vocab.unknown_token_id)}};
  HfTokenizerFiles files;
  files.tokenizer_json = tokenizer.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  files.tokenizer_config_json =
      TokenizerConfig(vocab, add_bos, add_eos, !spm && spec.clean_spaces).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  return files;
}

}  // namespace surge
