// WriteGgufTokenizerMetadata: tokenizer.json / tokenizer_config.json -> tokenizer.ggml.*
// the way llama.cpp's convert_hf_to_gguf.py writes them.
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "model/gguf_convert.h"

namespace surge {
namespace {

using Json = nlohmann::json;

// llama.cpp's token types.
enum TokenType : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

StatusOr<Json> ReadJson(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgumentError(path + ": malformed JSON");
  return json;
}

// bos_token etc. in tokenizer_config.json: a string, an {"content": ...} object, or null.
std::optional<std::string> TokenText(const Json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const Json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::nullopt;
}

std::string MergeText(const Json& merge) {
  if (merge.is_string()) return merge.get<std::string>();
  if (merge.is_array() && merge.size() == 2) return merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  return "";
}

bool IsByteToken(const std::string& t) {
  return t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t.back() == '>';
}

struct Vocab {
  std::vector<std::string> tokens;  // [vocab_size]
  std::vector<float> scores;        // [vocab_size]
  std::vector<int32_t> types;       // [vocab_size]
  std::map<std::string, int32_t> ids;
};

StatusOr<Vocab> BuildVocab(const Json& tokenizer, int64_t vocab_size, bool spm_like,
                           const std::string& path) {
  const Json& model = tokenizer["model"];
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return InvalidArgumentError(path + ": model.vocab missing");
  }
  Vocab v;
  std::map<int64_t, std::string> by_id;
  for (const auto& [text, id] : model["vocab"].items()) by_id[id.get<int64_t>()] = text;
  std::map<int64_t, bool> added_special;
  if (tokenizer.contains("added_tokens")) {
    for (const Json& t : tokenizer["added_tokens"]) {
      by_id[t["id"].get<int64_t>()] = t["content"].get<std::string>();
      added_special[t["id"].get<int64_t>()] = t.value("special", false);
    }
  }
  // Scores for the "llama" (sentencepiece-style) model: -rank of the merge that makes a
  // token, so that a score-greedy merger reproduces the BPE merge order; 0 for tokens no
  // merge makes (bytes, characters).
  std::map<std::string, float> merge_score;
  if (model.contains("merges")) {
    int64_t rank = 0;
    for (const Json& m : model["merges"]) {
      std::string text = MergeText(m);
      const size_t space = text.find(' ');
      if (space != std::string::npos) {
        merge_score.emplace(text.substr(0, space) + text.substr(space + 1), -static_cast<float>(++rank));
      }
    }
  }
  const int64_t n = std::max<int64_t>(vocab_size, by_id.empty() ? 0 : by_id.rbegin()->first + 1);
  for (int64_t id = 0; id < n; ++id) {
    auto it = by_id.find(id);
    if (it == by_id.end()) {  // llama.cpp pads the vocabulary to the model's size
      v.tokens.push_back("[PAD" + std::to_string(id) + "]");
      v.scores.push_back(0);
      v.types.push_back(kUnused);
      continue;
    }
    const std::string& text = it->second;
    int32_t type = kNormal;
    if (added_special.count(id)) type = added_special[id] ? kControl : kUserDefined;
    if (spm_like && IsByteToken(text)) type = kByte;
    if (spm_like && text == "<unk>") type = kUnknown;
    v.tokens.push_back(text);
    auto score = merge_score.find(text);
    v.scores.push_back(score == merge_score.end() ? 0.0f : score->second);
    v.types.push_back(type);
    v.ids.emplace(text, static_cast<int32_t>(id));
  }
  return v;
}

void WriteSpecialIds(const Json& config, const Vocab& v, GgufWriter& w) {
  const std::pair<const char*, const char*> kKeys[] = {{"bos_token", "tokenizer.ggml.bos_token_id"},
                                                       {"eos_token", "tokenizer.ggml.eos_token_id"},
                                                       {"unk_token", "tokenizer.ggml.unknown_token_id"},
                                                       {"pad_token", "tokenizer.ggml.padding_token_id"}};
  for (const auto& [config_key, gguf_key] : kKeys) {
    std::optional<std::string> text = TokenText(config, config_key);
    if (!text) continue;
    auto it = v.ids.find(*text);
    if (it != v.ids.end()) w.SetU32(gguf_key, static_cast<uint32_t>(it->second));
  }
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
    w.SetBool("tokenizer.ggml.add_bos_token", config["add_bos_token"].get<bool>());
  }
  if (config.contains("add_eos_token") && config["add_eos_token"].is_boolean()) {
    w.SetBool("tokenizer.ggml.add_eos_token", config["add_eos_token"].get<bool>());
  }
}

void WriteChatTemplate(const Json& config, GgufWriter& w) {
  if (!config.contains("chat_template")) return;
  const Json& t = config["chat_template"];
  if (t.is_string()) {
    w.SetString("tokenizer.chat_template", t.get<std::string>());
    return;
  }
  if (t.is_array()) {  // [{"name": "default", "template": ...}, ...]
    for (const Json& item : t) {
      if (item.value("name", "") == "default" && item.contains("template")) {
        w.SetString("tokenizer.chat_template", item["template"].get<std::string>());
      }
    }
  }
}

Status WriteMetadata(const std::string& hf_dir, const ModelConfig& config, GgufWriter& w) {
  const std::string path = hf_dir + "/tokenizer.json";
  ASSIGN_OR_RETURN(Json tokenizer, ReadJson(path));
  Json tokenizer_config = Json::object();
  if (std::ifstream(hf_dir + "/tokenizer_config.json")) {
    ASSIGN_OR_RETURN(tokenizer_config, ReadJson(hf_dir + "/tokenizer_config.json"));
  }
  if (!tokenizer.contains("model") || tokenizer["model"].value("type", "") != "BPE") {
    return UnimplementedError(path + ": only BPE tokenizers convert to GGUF");
  }
  // Byte-fallback BPE (Llama 1/2, TinyStories) is llama.cpp's "llama" model; byte-level
  // BPE (GPT-2, Llama 3, Qwen2) is "gpt2".
  const bool spm_like = tokenizer["model"].value("byte_fallback", false);
  ASSIGN_OR_RETURN(Vocab vocab, BuildVocab(tokenizer, config.vocab_size, spm_like, path));
  w.SetString("tokenizer.ggml.model", spm_like ? "llama" : "gpt2");
  if (!spm_like) {
    w.SetString("tokenizer.ggml.pre", config.model_type == "qwen2" ? "qwen2" : "llama-bpe");
  }
  w.SetStringArray("tokenizer.ggml.tokens", vocab.tokens);
  if (spm_like) w.SetF32Array("tokenizer.ggml.scores", vocab.scores);
  w.SetI32Array("tokenizer.ggml.token_type", vocab.types);
  // llama.cpp writes merges for gpt2 only; we add them for llama too (a reader may
  // prefer them to the scores; llama.cpp ignores them there).
  std::vector<std::string> merges;
  if (tokenizer["model"].contains("merges")) {
    for (const Json& m : tokenizer["model"]["merges"]) merges.push_back(MergeText(m));
  }
  w.SetStringArray("tokenizer.ggml.merges", merges);
  WriteSpecialIds(tokenizer_config, vocab, w);
  WriteChatTemplate(tokenizer_config, w);
  return OkStatus();
}

}  // namespace

Status WriteGgufTokenizerMetadata(const std::string& hf_dir, const ModelConfig& config,
                                  GgufWriter& w) {
  try {  // nlohmann::json throws on ill-typed fields; they become a Status here
    return WriteMetadata(hf_dir, config, w);
  } catch (const std::exception& e) {
    return InvalidArgumentError(hf_dir + "/tokenizer.json or tokenizer_config.json: " + e.what());
  }
}

}  // namespace surge
