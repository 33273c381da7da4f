// BertModel::Load: config.json + model.safetensors -> packed linear layers and f32
// embeddings and norms.
#include <utility>

#include "base/logging.h"
#include "model/bert_model.h"
#include "model/weight_store.h"

namespace surge {
namespace {

WeightFormat FormatOf(const LoadOptions& options) {
  switch (options.quantize) {
    case Quantization::kInt8: return {WeightDType::kInt8, 0};
    case Quantization::kInt4: return {WeightDType::kInt4, options.group_size};
    case Quantization::kNone: break;
  }
  return {options.dtype, 0};
}

// Reads tensors under one name prefix ("" or "bert."), packing linear layers.
class BertTensors {
 public:
  BertTensors(const WeightStore& store, std::string prefix, WeightFormat format, ThreadPool* pool)
      : store_(store), prefix_(std::move(prefix)), format_(format), pool_(pool) {}

  StatusOr<std::vector<float>> Vector(const std::string& name, int64_t size) const {
    return store_.LoadF32(prefix_ + name, {size});
  }
  StatusOr<std::vector<float>> Matrix(const std::string& name, int64_t rows, int64_t cols) const {
    return store_.LoadF32(prefix_ + name, {rows, cols});
  }
  PackedWeight Pack(const std::vector<float>& w, int64_t rows, int64_t cols) const {
    return PackedWeight::Pack(w.data(), rows, cols, format_, pool_);
  }

 private:
  const WeightStore& store_;
  std::string prefix_;
  WeightFormat format_;
  ThreadPool* pool_;
};

StatusOr<BertModel::Layer> LoadLayer(const BertTensors& t, int64_t i, int64_t h, int64_t inter) {
  const std::string p = "encoder.layer." + std::to_string(i) + ".";
  BertModel::Layer layer;
  std::vector<float> qkv, qkv_bias;
  for (const char* part : {"query", "key", "value"}) {
    ASSIGN_OR_RETURN(std::vector<float> w, t.Matrix(p + "attention.self." + part + ".weight", h, h));
    ASSIGN_OR_RETURN(std::vector<float> b, t.Vector(p + "attention.self." + part + ".bias", h));
    qkv.insert(qkv.end(), w.begin(), w.end());
    qkv_bias.insert(qkv_bias.end(), b.begin(), b.end());
  }
  layer.qkv = t.Pack(qkv, 3 * h, h);
  layer.qkv_bias = std::move(qkv_bias);
  ASSIGN_OR_RETURN(std::vector<float> attn_out, t.Matrix(p + "attention.output.dense.weight", h, h));
  layer.attn_out = t.Pack(attn_out, h, h);
  ASSIGN_OR_RETURN(layer.attn_out_bias, t.Vector(p + "attention.output.dense.bias", h));
  ASSIGN_OR_RETURN(layer.attn_norm_weight, t.Vector(p + "attention.output.LayerNorm.weight", h));
  ASSIGN_OR_RETURN(layer.attn_norm_bias, t.Vector(p + "attention.output.LayerNorm.bias", h));
  ASSIGN_OR_RETURN(std::vector<float> up, t.Matrix(p + "intermediate.dense.weight", inter, h));
  layer.up = t.Pack(up, inter, h);
  ASSIGN_OR_RETURN(layer.up_bias, t.Vector(p + "intermediate.dense.bias", inter));
  ASSIGN_OR_RETURN(std::vector<float> down, t.Matrix(p + "output.dense.weight", h, inter));
  layer.down = t.Pack(down, h, inter);
  ASSIGN_OR_RETURN(layer.down_bias, t.Vector(p + "output.dense.bias", h));
  ASSIGN_OR_RETURN(layer.out_norm_weight, t.Vector(p + "output.LayerNorm.weight", h));
  ASSIGN_OR_RETURN(layer.out_norm_bias, t.Vector(p + "output.LayerNorm.bias", h));
  return layer;
}

}  // namespace

StatusOr<std::unique_ptr<BertModel>> BertModel::Load(const std::string& model_dir, ThreadPool* pool,
                                                     const LoadOptions& options) {
  ASSIGN_OR_RETURN(BertConfig config, LoadBertConfig(model_dir));
  std::unique_ptr<BertModel> model(new BertModel(std::move(config), pool, options));
  RETURN_IF_ERROR(model->LoadWeights(model_dir));
  return model;
}

Status BertModel::LoadWeights(const std::string& model_dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<WeightStore> store, WeightStore::Open(model_dir));
  const std::string prefix = store->Contains("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const BertTensors t(*store, prefix, FormatOf(options_), pool_);
  const ModelConfig& c = bert_.model;
  const int64_t h = c.hidden_size;
  ASSIGN_OR_RETURN(word_embeddings_, t.Matrix("embeddings.word_embeddings.weight", c.vocab_size, h));
  ASSIGN_OR_RETURN(position_embeddings_,
                   t.Matrix("embeddings.position_embeddings.weight", c.max_position_embeddings, h));
  ASSIGN_OR_RETURN(std::vector<float> types, t.Matrix("embeddings.token_type_embeddings.weight", bert_.type_vocab_size, h));
  token_type_row_.assign(types.begin(), types.begin() + h);
  ASSIGN_OR_RETURN(embed_norm_weight_, t.Vector("embeddings.LayerNorm.weight", h));
  ASSIGN_OR_RETURN(embed_norm_bias_, t.Vector("embeddings.LayerNorm.bias", h));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    ASSIGN_OR_RETURN(Layer layer, LoadLayer(t, i, h, c.intermediate_size));
    layers_.push_back(std::move(layer));
  }
  LOG(INFO) << "BERT encoder " << model_dir << ": " << c.num_layers << " layers, hidden " << h << ", "
            << (bert_.pooling == EncoderPooling::kCls ? "cls" : "mean") << " pooling"
            << (bert_.normalize ? ", normalized" : "") << ", inputs up to " << bert_.max_seq_length << " tokens";
  return OkStatus();
}

}  // namespace surge
