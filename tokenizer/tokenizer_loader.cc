// Tokenizer::FromJson / FromDirectory: tokenizer.json (+ tokenizer_config.json and
// friends) -> TokenizerState. Every error names the file and the problem.
#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/json_depth.h"
#include "base/mapped_file.h"
#include "tokenizer/component_loader.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_state.h"
#include "tokenizer/wordpiece_model.h"

namespace surge {
namespace {

using Json = nlohmann::json;

const Json& Member(const Json& config, const char* key) {
  static const Json kNull;
  auto it = config.find(key);
  return it == config.end() ? kNull : *it;
}

bool GetBool(const Json& config, const char* key, bool fallback) {
  const Json& value = Member(config, key);
  return value.is_boolean() ? value.get<bool>() : fallback;
}

std::string GetString(const Json& config, const char* key) {
  const Json& value = Member(config, key);
  return value.is_string() ? value.get<std::string>() : "";
}

// A token named in tokenizer_config.json: "text" or {"content": "text", ...}.
std::string TokenContent(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content")) return value.at("content").get<std::string>();
  return "";
}

Status LoadVocab(const Json& model, Vocab* vocab) {
  const Json& entries = Member(model, "vocab");
  if (!entries.is_object()) return InvalidArgumentError("model.vocab is not an object of token -> id");
  vocab->token_to_id.reserve(entries.size());
  for (const auto& [token, id_json] : entries.items()) {
    const auto id = id_json.get<int64_t>();
    if (id < 0 || id > INT32_MAX / 2) {
      return InvalidArgumentError("model.vocab id " + std::to_string(id) + " of '" + token + "' is out of range");
    }
    vocab->Set(token, static_cast<int32_t>(id));
  }
  return OkStatus();
}

StatusOr<std::vector<std::pair<std::string, std::string>>> LoadMerges(const Json& model) {
  std::vector<std::pair<std::string, std::string>> merges;
  const Json& entries = Member(model, "merges");
  if (entries.is_null()) return merges;
  if (!entries.is_array()) return InvalidArgumentError("model.merges is not a list");
  merges.reserve(entries.size());
  for (const Json& entry : entries) {
    if (entry.is_array() && entry.size() == 2) {  // ["a", "b"]
      merges.emplace_back(entry[0].get<std::string>(), entry[1].get<std::string>());
      continue;
    }
    const std::string& text = entry.get_ref<const std::string&>();  // "a b"
    size_t space = text.find(' ', 1);
    if (space == std::string::npos) return InvalidArgumentError("merge '" + text + "' is not 'left right'");
    size_t end = text.find(' ', space + 1);  // like JavaScript's split(" ", 2)
    merges.emplace_back(text.substr(0, space), text.substr(space + 1, end == std::string::npos ? end : end - space - 1));
  }
  return merges;
}

Status LoadAddedTokens(const Json& root, TokenizerState* state) {
  for (const Json& entry : Member(root, "added_tokens")) {
    AddedToken token;
    token.content = entry.at("content").get<std::string>();
    token.id = entry.at("id").get<int32_t>();
    if (token.id < 0) return InvalidArgumentError("added token '" + token.content + "' has a negative id");
    token.special = GetBool(entry, "special", false);
    token.lstrip = GetBool(entry, "lstrip", false);
    token.rstrip = GetBool(entry, "rstrip", false);
    token.normalized = GetBool(entry, "normalized", !token.special);
    token.single_word = GetBool(entry, "single_word", false);
    state->vocab.Set(token.content, token.id);
    state->added_tokens.push_back(std::move(token));
  }
  return OkStatus();
}

// Splits the added tokens between the raw-text and normalized-text matchers (only with a
// normalizer do "normalized" tokens wait for normalization).
void BuildMatchers(TokenizerState* state) {
  std::vector<std::pair<std::string, const AddedToken*>> raw, normalized;
  for (const AddedToken& token : state->added_tokens) {
    state->added_by_content[token.content] = &token;
    state->added_contents.insert(token.content);
    if (token.normalized && state->normalizer != nullptr) {
      std::string normalized_content = state->normalizer->Normalize(token.content);
      state->added_by_content[normalized_content] = &token;
      normalized.emplace_back(std::move(normalized_content), &token);
    } else {
      raw.emplace_back(token.content, &token);
    }
  }
  state->raw_matcher = std::make_unique<AddedTokenMatcher>(raw);
  state->normalized_matcher = std::make_unique<AddedTokenMatcher>(normalized);
}

StatusOr<std::unique_ptr<TokenModel>> LoadWordPiece(const Json& model, const Vocab& vocab) {
  WordPieceOptions options;
  const std::string unk = GetString(model, "unk_token").empty() ? "[UNK]" : GetString(model, "unk_token");
  std::optional<int32_t> unk_id = vocab.Find(unk);
  if (!unk_id) return InvalidArgumentError("model.unk_token '" + unk + "' is not in the vocabulary");
  options.unk_id = *unk_id;
  if (Member(model, "continuing_subword_prefix").is_string()) {
    options.continuing_subword_prefix = GetString(model, "continuing_subword_prefix");
  }
  const Json& max_chars = Member(model, "max_input_chars_per_word");
  if (max_chars.is_number_integer()) options.max_input_chars_per_word = max_chars.get<int32_t>();
  return std::unique_ptr<TokenModel>(std::make_unique<WordPieceModel>(&vocab, std::move(options)));
}

StatusOr<std::unique_ptr<TokenModel>> LoadModel(const Json& model, const Vocab& vocab, std::string* end_of_word_suffix) {
  std::string type = GetString(model, "type");
  if (type.empty() && model.contains("merges")) type = "BPE";
  if (type == "WordPiece") return LoadWordPiece(model, vocab);
  if (type != "BPE") return UnimplementedError("model type '" + type + "' is not supported (only BPE and WordPiece)");
  ASSIGN_OR_RETURN(auto merges, LoadMerges(model));
  BpeOptions options;
  if (std::string unk = GetString(model, "unk_token"); !unk.empty()) options.unk_id = vocab.Find(unk);
  options.fuse_unk = GetBool(model, "fuse_unk", false);
  options.byte_fallback = GetBool(model, "byte_fallback", false);
  options.ignore_merges = GetBool(model, "ignore_merges", false);
  options.continuing_subword_prefix = GetString(model, "continuing_subword_prefix");
  options.end_of_word_suffix = GetString(model, "end_of_word_suffix");
  *end_of_word_suffix = options.end_of_word_suffix;
  int num_dropped = 0;
  ASSIGN_OR_RETURN(auto bpe, BpeModel::Create(&vocab, merges, std::move(options), &num_dropped));
  if (num_dropped > 0) {
    LOG(WARNING) << num_dropped << " BPE merges name tokens outside the vocabulary; ignored";
  }
  return std::unique_ptr<TokenModel>(std::move(bpe));
}

void LoadConfig(const Json& config, TokenizerState* state) {
  state->bos_token = TokenContent(Member(config, "bos_token"));
  state->eos_token = TokenContent(Member(config, "eos_token"));
  state->add_bos_token = GetBool(config, "add_bos_token", false);
  state->add_eos_token = GetBool(config, "add_eos_token", false);
  // tokenizers.js cleans up unless told not to (transformers' older default).
  state->clean_up_tokenization_spaces = GetBool(config, "clean_up_tokenization_spaces", true);
  const Json& chat_template = Member(config, "chat_template");
  if (chat_template.is_string()) {
    state->chat_template = chat_template.get<std::string>();
  } else if (chat_template.is_array()) {  // [{"name": "default", "template": "..."}, ...]
    for (const Json& entry : chat_template) {
      if (state->chat_template.empty() || GetString(entry, "name") == "default") {
        state->chat_template = GetString(entry, "template");
      }
    }
  }
}

// Marks the specials: added tokens flagged special and the config's additional ones.
void MarkSpecialTokens(const Json& config, TokenizerState* state) {
  TokenSet special_contents;
  for (const AddedToken& token : state->added_tokens) {
    if (token.special) special_contents.insert(token.content);
  }
  for (const Json& extra : Member(config, "additional_special_tokens")) {
    if (std::string content = TokenContent(extra); !content.empty()) special_contents.insert(content);
  }
  state->is_special.assign(state->vocab.size(), 0);
  for (int32_t id = 0; id < state->vocab.size(); ++id) {
    state->is_special[id] = state->vocab.has_token[id] && special_contents.contains(state->vocab.id_to_token[id]);
  }
}

void ResolveBosEos(const Json& config, TokenizerState* state) {
  if (!state->bos_token.empty()) {
    state->bos_token_id = state->vocab.Find(state->bos_token).value_or(-1);
  } else if (!config.contains("bos_token") && state->post_processor != nullptr) {
    std::vector<int32_t> prefix = state->post_processor->PrefixIds();  // no config: the template's
    if (!prefix.empty()) state->bos_token_id = prefix.front();
  }
  if (state->bos_token_id >= 0 && state->bos_token.empty()) {
    state->bos_token = state->vocab.id_to_token[state->bos_token_id];
  }
  if (auto id = state->vocab.Find(state->eos_token); id && !state->eos_token.empty()) {
    state->eos_token_ids.push_back(*id);
  }
}

StatusOr<std::unique_ptr<TokenizerState>> BuildState(const Json& root, const Json& config) {
  auto state = std::make_unique<TokenizerState>();
  const Json& model = Member(root, "model");
  if (!model.is_object()) return InvalidArgumentError("no \"model\" object");
  RETURN_IF_ERROR(LoadVocab(model, &state->vocab));
  RETURN_IF_ERROR(LoadAddedTokens(root, state.get()));
  ASSIGN_OR_RETURN(state->normalizer, ParseNormalizer(Member(root, "normalizer")));
  ASSIGN_OR_RETURN(state->pre_tokenizer, ParsePreTokenizer(Member(root, "pre_tokenizer")));
  ASSIGN_OR_RETURN(state->model, LoadModel(model, state->vocab, &state->end_of_word_suffix));
  BuildMatchers(state.get());
  ASSIGN_OR_RETURN(state->post_processor, ParsePostProcessor(Member(root, "post_processor"), state->vocab));
  ASSIGN_OR_RETURN(state->decoder, ParseDecoder(Member(root, "decoder"), &state->added_contents));
  LoadConfig(config, state.get());
  // The WordPiece decoder cleans up each token itself (its `cleanup`); the Rust crate
  // applies no second pass over the joined text.
  if (GetString(Member(root, "decoder"), "type") == "WordPiece") state->clean_up_tokenization_spaces = false;
  MarkSpecialTokens(config, state.get());
  ResolveBosEos(config, state.get());
  return state;
}

StatusOr<Json> ParseJson(const std::string& text, const std::string& name) {
  if (!JsonDepthWithin(text)) return InvalidArgumentError(name + ": malformed JSON: nested too deep");
  try {
    Json parsed = Json::parse(text);
    if (!parsed.is_object()) return InvalidArgumentError(name + ": malformed JSON: not an object");
    return parsed;
  } catch (const Json::exception& error) {
    return InvalidArgumentError(name + ": malformed JSON: " + error.what());
  }
}

StatusOr<std::unique_ptr<TokenizerState>> LoadState(const std::string& tokenizer_json,
                                                    const std::string& config_json,
                                                    const std::string& source_name) {
  ASSIGN_OR_RETURN(Json root, ParseJson(tokenizer_json, source_name));
  Json config = Json::object();
  if (!config_json.empty()) {
    ASSIGN_OR_RETURN(config, ParseJson(config_json, source_name + " (tokenizer_config.json)"));
  }
  try {
    auto state = BuildState(root, config);
    if (!state.ok()) return state.status().WithContext(source_name);
    (*state)->source_name = source_name;
    return state;
  } catch (const Json::exception& error) {  // a field of the wrong type
    return InvalidArgumentError(source_name + ": malformed tokenizer: " + error.what());
  }
}

// generation_config.json's eos_token_id (one id or a list) adds stop ids.
void AddGenerationEos(const std::string& path, TokenizerState* state) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return;
  if (!JsonDepthWithin(*text)) return;
  Json parsed = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const Json& eos = parsed.is_object() ? Member(parsed, "eos_token_id") : Json();
  std::vector<int32_t> ids;
  if (eos.is_number_integer()) ids.push_back(eos.get<int32_t>());
  if (eos.is_array()) {
    for (const Json& id : eos) {
      if (id.is_number_integer()) ids.push_back(id.get<int32_t>());
    }
  }
  for (int32_t id : ids) {
    if (std::find(state->eos_token_ids.begin(), state->eos_token_ids.end(), id) == state->eos_token_ids.end()) {
      state->eos_token_ids.push_back(id);
    }
  }
}

}  // namespace

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(const std::string& tokenizer_json,
                                                        const std::string& config_json,
                                                        const std::string& source_name) {
  ASSIGN_OR_RETURN(auto state, LoadState(tokenizer_json, config_json, source_name));
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(state)));
}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir) / "tokenizer.json").string();
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return NotFoundError(path + ": no such file (a tokenizer directory needs tokenizer.json)");
  }
  ASSIGN_OR_RETURN(std::string tokenizer_json, ReadFileToString(path));
  std::string config_json;
  const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  if (fs::is_regular_file(config_path, error)) {
    ASSIGN_OR_RETURN(config_json, ReadFileToString(config_path));
  }
  ASSIGN_OR_RETURN(auto state, LoadState(tokenizer_json, config_json, path));
  const std::string template_path = (fs::path(dir) / "chat_template.jinja").string();
  if (state->chat_template.empty() && fs::is_regular_file(template_path, error)) {
    ASSIGN_OR_RETURN(state->chat_template, ReadFileToString(template_path));
  }
  AddGenerationEos((fs::path(dir) / "generation_config.json").string(), state.get());
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(state)));
}

}  // namespace surge
