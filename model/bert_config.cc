#include "model/bert_config.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/json_depth.h"
#include "base/mapped_file.h"
#include "model/config_reader.h"

namespace surge {
namespace {

using config_internal::ConfigReader;
using config_internal::Json;

StatusOr<Json> ReadJson(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  if (!JsonDepthWithin(text)) return InvalidArgumentError(path + ": JSON nested too deep");
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(path + ": malformed JSON: " + e.what());
  }
}

void ReadDims(ConfigReader& reader, BertConfig* bert) {
  ModelConfig& c = bert->model;
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                          "vocab_size", "max_position_embeddings"}) {
    reader.Require(key);
  }
  reader.Int("hidden_size", &c.hidden_size);
  reader.Int("intermediate_size", &c.intermediate_size);
  reader.Int("num_hidden_layers", &c.num_layers);
  reader.Int("num_attention_heads", &c.num_heads);
  reader.Int("vocab_size", &c.vocab_size);
  reader.Int("max_position_embeddings", &c.max_position_embeddings);
  reader.Int("type_vocab_size", &bert->type_vocab_size);
  reader.Positive("layer_norm_eps", &bert->layer_norm_eps);
  if (!reader.ok()) return;
  if (c.hidden_size % c.num_heads != 0) {
    reader.Fail(StatusCode::kInvalidArgument, "hidden_size must be a multiple of num_attention_heads");
  }
  c.num_kv_heads = c.num_heads;
  c.head_dim = c.hidden_size / c.num_heads;
  c.model_type = "bert";
  c.is_encoder = true;
  bert->max_seq_length = c.max_position_embeddings;
}

void ReadSupported(ConfigReader& reader) {
  std::string act = "gelu", position = "absolute";
  reader.String("hidden_act", &act);
  reader.String("position_embedding_type", &position);
  if (act != "gelu") reader.Fail(StatusCode::kUnimplemented, "hidden_act '" + act + "' is not supported (gelu)");
  if (position != "absolute") {
    reader.Fail(StatusCode::kUnimplemented, "position_embedding_type '" + position + "' is not supported (absolute)");
  }
}

// modules.json: a Normalize module means unit vectors; 1_Pooling/config.json the pooling.
Status ReadSentenceTransformers(const std::string& dir, BertConfig* bert) {
  namespace fs = std::filesystem;
  if (fs::exists(dir + "/modules.json")) {
    ASSIGN_OR_RETURN(Json modules, ReadJson(dir + "/modules.json"));
    for (const Json& module : modules.is_array() ? modules : Json::array()) {
      const std::string type = module.is_object() ? module.value("type", "") : "";
      if (type.ends_with(".Normalize")) bert->normalize = true;
    }
  }
  const std::string pooling_path = dir + "/1_Pooling/config.json";
  if (fs::exists(pooling_path)) {
    ASSIGN_OR_RETURN(Json pooling, ReadJson(pooling_path));
    const bool cls = pooling.value("pooling_mode_cls_token", false);
    const bool mean = pooling.value("pooling_mode_mean_tokens", false);
    const bool other = pooling.value("pooling_mode_max_tokens", false) ||
                       pooling.value("pooling_mode_mean_sqrt_len_tokens", false) ||
                       pooling.value("pooling_mode_weightedmean_tokens", false) ||
                       pooling.value("pooling_mode_lasttoken", false);
    if (other || cls == mean) {
      return UnimplementedError(pooling_path + ": only one of pooling_mode_mean_tokens / pooling_mode_cls_token is supported");
    }
    bert->pooling = cls ? EncoderPooling::kCls : EncoderPooling::kMean;
  }
  const std::string sbert_path = dir + "/sentence_bert_config.json";
  if (fs::exists(sbert_path)) {
    ASSIGN_OR_RETURN(Json sbert, ReadJson(sbert_path));
    const Json& max_len = sbert.is_object() && sbert.contains("max_seq_length") ? sbert.at("max_seq_length") : Json();
    if (max_len.is_number_integer() && max_len.get<int64_t>() >= 2) {
      bert->max_seq_length = std::min(bert->max_seq_length, max_len.get<int64_t>());
    }
  }
  return OkStatus();
}

}  // namespace

bool IsBertDirectory(const std::string& model_dir) {
  StatusOr<Json> root = ReadJson(model_dir + "/config.json");
  if (!root.ok() || !root->is_object()) return false;
  if (root->value("model_type", "") == "bert") return true;
  const Json& classes = root->contains("architectures") ? root->at("architectures") : Json();
  for (const Json& name : classes.is_array() ? classes : Json::array()) {
    if (name.is_string() && name.get<std::string>().starts_with("Bert")) return true;
  }
  return false;
}

StatusOr<BertConfig> ParseBertConfig(const std::string& json_text, const std::string& path) {
  if (!JsonDepthWithin(json_text)) return InvalidArgumentError(path + ": JSON nested too deep");
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(path + ": malformed JSON: " + e.what());
  }
  if (!root.is_object()) return InvalidArgumentError(path + ": not a JSON object");
  Status status;
  ConfigReader reader(root, path, &status);
  BertConfig bert;
  ReadDims(reader, &bert);
  ReadSupported(reader);
  RETURN_IF_ERROR(status);
  return bert;
}

StatusOr<BertConfig> LoadBertConfig(const std::string& model_dir) {
  const std::string path = model_dir + "/config.json";
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ASSIGN_OR_RETURN(BertConfig bert, ParseBertConfig(text, path));
  RETURN_IF_ERROR(ReadSentenceTransformers(model_dir, &bert));
  return bert;
}

}  // namespace surge
