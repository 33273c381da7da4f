// GgufVocabFromHfDirectory: tokenizer.json -> GGUF tokenizer metadata, as llama.cpp's
// convert_hf_to_gguf.py writes it (get_vocab_base + _set_vocab_gpt2 for byte-level BPE,
// LlamaHfVocab + _set_vocab_llama_hf for BPE with byte fallback, gguf-py's SpecialVocab
// for the special token ids, add_bos/add_eos and the chat template).
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_depth.h"
#include "base/mapped_file.h"
#include "tokenizer/gguf_vocab.h"

namespace surge {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

const Json& Member(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string TokenContent(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && Member(value, "content").is_string()) return value.at("content").get<std::string>();
  return "";
}

StatusOr<Json> ReadJson(const fs::path& path, bool required) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    if (required) return NotFoundError(path.string() + ": no such file");
    return Json::object();
  }
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path.string()));
  if (!JsonDepthWithin(text)) return InvalidArgumentError(path.string() + ": JSON nested too deep");
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return InvalidArgumentError(path.string() + ": malformed JSON");
  return parsed;
}

// convert_hf_to_gguf.py's does_token_look_special.
bool LooksSpecial(const std::string& token) {
  auto wrapped = [&](std::string_view open, std::string_view close) {
    return token.size() >= open.size() + close.size() && token.starts_with(open) && token.ends_with(close);
  };
  return token == "<pad>" || token == "<mask>" || token == "<2mass>" || token == "[@BOS@]" || wrapped("<|", "|>") ||
         wrapped("<｜", "｜>") || wrapped("<unused", ">");
}

// The tokenizer.ggml.pre name for the tokenizer.json pre-tokenizer. llama.cpp hashes the
// encoding of a probe text; matching the Split regexes picks the same name for the
// families surge knows.
StatusOr<std::string> DetectPre(const Json& pre_tokenizer) {
  std::vector<std::string> regexes;
  bool byte_level_regex = false;
  const Json& steps = Member(pre_tokenizer, "type") == "Sequence" ? Member(pre_tokenizer, "pretokenizers")
                                                                   : Json::array({pre_tokenizer});
  for (const Json& step : steps) {
    if (Member(step, "type") == "Split") regexes.push_back(TokenContent(Member(Member(step, "pattern"), "Regex")));
    if (Member(step, "type") == "ByteLevel") byte_level_regex |= Member(step, "use_regex") != false;
  }
  const std::string tail = R"(|[^\r\n\p{L}\p{N}]?\p{L}+|)";
  const std::string contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
  if (regexes.size() == 1 && regexes[0].starts_with(contractions + tail + R"(\p{N}{1,3}|)")) return std::string("llama-bpe");
  if (regexes.size() == 1 && regexes[0].starts_with(contractions + tail + R"(\p{N}|)")) return std::string("qwen2");
  if (regexes.size() == 3 && regexes[0] == R"(\p{N}{1,3})") return std::string("deepseek-v3");
  if (regexes.empty() && byte_level_regex) return std::string("gpt-2");
  return UnimplementedError("cannot tell tokenizer.ggml.pre from this pre_tokenizer; set HfToGgufOptions::pre");
}

// tokenizer.json merges as gguf-py writes them: "left right"; pairs with a space inside a
// part encode that space as U+0120.
std::vector<std::string> MergeStrings(const Json& merges) {
  std::vector<std::string> out;
  for (const Json& merge : merges) {
    if (merge.is_string()) {
      out.push_back(merge.get<std::string>());
      continue;
    }
    std::string parts[2] = {merge.at(0).get<std::string>(), merge.at(1).get<std::string>()};
    for (std::string& part : parts) part = std::regex_replace(part, std::regex(" "), "\xC4\xA0");
    out.push_back(parts[0] + " " + parts[1]);
  }
  return out;
}

struct HfFiles {
  Json tokenizer, config, model_config;
  std::map<int64_t, std::string> id_to_token;  // model vocabulary and added tokens
  std::map<int64_t, const Json*> added;        // added token entries by id
};

void FillGpt2(const HfFiles& files, std::optional<int64_t> vocab_size, GgufVocab* vocab) {
  int64_t size = vocab_size.value_or(files.id_to_token.empty() ? 0 : files.id_to_token.rbegin()->first + 1);
  for (int64_t id = 0; id < size; ++id) {
    auto it = files.id_to_token.find(id);
    if (it == files.id_to_token.end()) {
      vocab->tokens.push_back("[PAD" + std::to_string(id) + "]");
      vocab->token_types.push_back(static_cast<int32_t>(GgufTokenType::kUnused));
      continue;
    }
    std::string token = it->second;
    GgufTokenType type = GgufTokenType::kNormal;
    if (auto added = files.added.find(id); added != files.added.end()) {
      if (Member(*added->second, "special") == true || LooksSpecial(token)) {
        type = GgufTokenType::kControl;
      } else {  // "pre-normalize user-defined spaces"
        token = std::regex_replace(token, std::regex("\xE2\x96\x81"), " ");
        type = GgufTokenType::kUserDefined;
      }
    }
    vocab->tokens.push_back(std::move(token));
    vocab->token_types.push_back(static_cast<int32_t>(type));
  }
  vocab->merges = MergeStrings(Member(Member(files.tokenizer, "model"), "merges"));
}

// Scores for HfScores::kFromMerges: -(rank of the first merge producing the token).
std::vector<float> ScoresFromMerges(const HfFiles& files, const GgufVocab& vocab) {
  std::map<std::string, int64_t> first_rank;
  const std::vector<std::string> merges = MergeStrings(Member(Member(files.tokenizer, "model"), "merges"));
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const size_t space = merges[rank].find(' ', 1);
    if (space == std::string::npos) continue;
    first_rank.emplace(merges[rank].substr(0, space) + merges[rank].substr(space + 1), rank);
  }
  std::vector<float> scores;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    auto it = first_rank.find(vocab.tokens[id]);
    scores.push_back(-static_cast<float>(it != first_rank.end() ? it->second : merges.size() + id));
  }
  return scores;
}

// LlamaHfVocab: the base vocabulary in id order (bytes <0xNN> as BYTE, the config's
// special tokens as CONTROL), then added tokens past it.
Status FillLlama(const HfFiles& files, HfScores scores, GgufVocab* vocab) {
  std::set<std::string> specials;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"}) {
    if (std::string content = TokenContent(Member(files.config, key)); !content.empty()) specials.insert(content);
  }
  for (const Json& extra : Member(files.config, "additional_special_tokens")) specials.insert(TokenContent(extra));
  const Json& model_vocab = Member(Member(files.tokenizer, "model"), "vocab");
  const int64_t base_size = static_cast<int64_t>(model_vocab.size());
  static const std::regex kByte("<0x[0-9A-Fa-f]{2}>");
  for (const auto& [id, token] : files.id_to_token) {
    if (id != static_cast<int64_t>(vocab->tokens.size())) {
      return InvalidArgumentError("token ids are not contiguous: no token has id " + std::to_string(vocab->tokens.size()));
    }
    GgufTokenType type = GgufTokenType::kNormal;
    if (std::regex_match(token, kByte)) type = GgufTokenType::kByte;
    else if (specials.contains(token)) type = GgufTokenType::kControl;
    else if (id >= base_size) type = GgufTokenType::kUserDefined;
    vocab->tokens.push_back(token);
    vocab->token_types.push_back(static_cast<int32_t>(type));
  }
  vocab->scores.assign(vocab->tokens.size(), -1000.0f);
  if (scores == HfScores::kFromMerges) vocab->scores = ScoresFromMerges(files, *vocab);
  return OkStatus();
}

// gguf-py SpecialVocab: ids of the config's special tokens (looked up among the added
// tokens), then config.json's *_token_id; add_bos/add_eos from a TemplateProcessing
// post-processor, overridden by tokenizer_config.json's add_*_token.
void FillSpecials(const HfFiles& files, GgufVocab* vocab) {
  auto lookup = [&](const char* key, const char* id_key) -> std::optional<int64_t> {
    const std::string content = TokenContent(Member(files.config, key));
    for (const Json& added : Member(files.tokenizer, "added_tokens")) {
      if (!content.empty() && Member(added, "content") == content) return Member(added, "id").get<int64_t>();
    }
    if (Member(files.model_config, id_key).is_number_integer()) return files.model_config.at(id_key).get<int64_t>();
    return std::nullopt;
  };
  vocab->bos_token_id = lookup("bos_token", "bos_token_id");
  vocab->eos_token_id = lookup("eos_token", "eos_token_id");
  vocab->unknown_token_id = lookup("unk_token", "unk_token_id");
  vocab->padding_token_id = lookup("pad_token", "pad_token_id");
  const Json& post = Member(files.tokenizer, "post_processor");
  const Json& single = Member(post, "single");
  if (Member(post, "type") == "TemplateProcessing" && single.is_array() && single.size() > 1) {
    const std::string first = TokenContent(Member(Member(single.front(), "SpecialToken"), "id"));
    const std::string last = TokenContent(Member(Member(single.back(), "SpecialToken"), "id"));
    if (!first.empty()) vocab->add_bos_token = first == TokenContent(Member(files.config, "bos_token"));
    if (!last.empty()) vocab->add_eos_token = last == TokenContent(Member(files.config, "eos_token"));
  }
  if (Member(files.config, "add_bos_token").is_boolean()) vocab->add_bos_token = files.config.at("add_bos_token").get<bool>();
  if (Member(files.config, "add_eos_token").is_boolean()) vocab->add_eos_token = files.config.at("add_eos_token").get<bool>();
}

StatusOr<std::string> ChatTemplate(const fs::path& dir, const Json& config) {
  const Json& chat_template = Member(config, "chat_template");
  if (chat_template.is_string()) return chat_template.get<std::string>();
  std::string result;
  for (const Json& entry : chat_template.is_array() ? chat_template : Json::array()) {
    if (result.empty() || Member(entry, "name") == "default") result = TokenContent(Member(entry, "template"));
  }
  std::error_code error;
  if (result.empty() && fs::is_regular_file(dir / "chat_template.jinja", error)) {
    return ReadFileToString((dir / "chat_template.jinja").string());
  }
  return result;
}

StatusOr<GgufVocab> Convert(const fs::path& dir, const HfToGgufOptions& options) {
  HfFiles files;
  ASSIGN_OR_RETURN(files.tokenizer, ReadJson(dir / "tokenizer.json", true));
  ASSIGN_OR_RETURN(files.config, ReadJson(dir / "tokenizer_config.json", false));
  ASSIGN_OR_RETURN(files.model_config, ReadJson(dir / "config.json", false));
  const Json& model = Member(files.tokenizer, "model");
  if (Member(model, "type") != "BPE") return UnimplementedError("only BPE tokenizer.json models convert to GGUF");
  for (const auto& [token, id] : Member(model, "vocab").items()) files.id_to_token[id.get<int64_t>()] = token;
  for (const Json& added : Member(files.tokenizer, "added_tokens")) {
    const int64_t id = Member(added, "id").get<int64_t>();
    files.id_to_token[id] = Member(added, "content").get<std::string>();
    files.added[id] = &added;
  }
  GgufVocab vocab;
  if (Member(model, "byte_fallback") == true) {
    vocab.model = "llama";
    vocab.pre = "default";
    RETURN_IF_ERROR(FillLlama(files, options.scores, &vocab));
  } else {
    vocab.model = "gpt2";
    if (options.pre.empty()) {
      ASSIGN_OR_RETURN(vocab.pre, DetectPre(Member(files.tokenizer, "pre_tokenizer")));
    } else {
      vocab.pre = options.pre;
    }
    std::optional<int64_t> size = options.vocab_size;
    if (!size && Member(files.model_config, "vocab_size").is_number_integer()) {
      size = files.model_config.at("vocab_size").get<int64_t>();
    }
    FillGpt2(files, size, &vocab);
  }
  FillSpecials(files, &vocab);
  ASSIGN_OR_RETURN(vocab.chat_template, ChatTemplate(dir, files.config));
  return vocab;
}

}  // namespace

StatusOr<GgufVocab> GgufVocabFromHfDirectory(const std::string& dir, const HfToGgufOptions& options) {
  try {
    auto vocab = Convert(dir, options);
    if (!vocab.ok()) return vocab.status().WithContext(dir);
    return vocab;
  } catch (const nlohmann::json::exception& error) {  // a field of the wrong type
    return InvalidArgumentError(dir + ": malformed tokenizer files: " + error.what());
  }
}

}  // namespace surge
