// BertConfig: a BERT-family sentence encoder's config.json (BertModel and its relatives)
// and sentence-transformers' modules.json / 1_Pooling/config.json / sentence_bert_config.json
// -- what the encoder runs and how its hidden states become one vector.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "model/config.h"

namespace surge {

// How the token rows of the last layer become one vector (sentence-transformers' Pooling).
enum class EncoderPooling { kMean, kCls };

struct BertConfig {
  // hidden_size, intermediate_size, num_layers, num_heads (= num_kv_heads), head_dim,
  // vocab_size, max_position_embeddings; is_encoder set, model_type "bert".
  ModelConfig model;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  // The longest input, [CLS] and [SEP] included: sentence_bert_config.json's
  // max_seq_length when given, else max_position_embeddings. Longer inputs are cut to it.
  int64_t max_seq_length = 0;
  EncoderPooling pooling = EncoderPooling::kMean;  // 1_Pooling/config.json; mean without one
  bool normalize = false;  // modules.json lists a Normalize module: vectors are unit length
};

// True when DIR/config.json names a BERT-family encoder (model_type "bert" or an
// architectures entry starting with "Bert"); false when it is absent or something else.
bool IsBertDirectory(const std::string& model_dir);

// Parses config.json text (`path` names it in errors). INVALID_ARGUMENT names the key;
// UNIMPLEMENTED for a hidden_act other than gelu or a position_embedding_type other than
// absolute.
StatusOr<BertConfig> ParseBertConfig(const std::string& json_text, const std::string& path);

// DIR/config.json, then the sentence-transformers files when present (an unknown pooling
// mode -- max, weighted mean, last -- is UNIMPLEMENTED naming the file).
StatusOr<BertConfig> LoadBertConfig(const std::string& model_dir);

}  // namespace surge
