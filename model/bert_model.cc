#include "model/bert_model.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"

namespace surge {
namespace {

// Per-head attention scratch: Q and K rows [L, d], V transposed [d, L], scores [L, L].
int64_t ScratchFloats(int64_t max_len, int64_t head_dim) { return 3 * max_len * head_dim + max_len * max_len; }

}  // namespace

void LayerNormRows(const float* x, const float* weight, const float* bias, int64_t num_rows, int64_t dim,
                   float eps, float* y) {
  for (int64_t r = 0; r < num_rows; ++r) {
    const float* in = x + r * dim;
    float* out = y + r * dim;
    float sum = 0;
    for (int64_t i = 0; i < dim; ++i) sum += in[i];
    const float mean = sum / static_cast<float>(dim);
    float squares = 0;
    for (int64_t i = 0; i < dim; ++i) squares += (in[i] - mean) * (in[i] - mean);
    const float inv = 1.0f / std::sqrt(squares / static_cast<float>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) out[i] = (in[i] - mean) * inv * weight[i] + bias[i];
  }
}

// erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (+-1 beyond in f32): a minimax rational fit
// (the one Eigen and XLA use), branch-free so that the loop vectorizes.
void GeluErf(float* x, int64_t n) {
  constexpr float kA13 = -2.72614225801306e-10f, kA11 = 2.77068142495902e-08f, kA9 = -2.10102402082508e-06f,
                  kA7 = -5.69250639462346e-05f, kA5 = -7.34990630326855e-04f, kA3 = -2.95459980854025e-03f,
                  kA1 = -1.60960333262415e-02f;
  constexpr float kB8 = -1.45660718464996e-05f, kB6 = -2.13374055278905e-04f, kB4 = -1.68282697438203e-03f,
                  kB2 = -7.37332916720468e-03f, kB0 = -1.42647390514189e-02f;
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) {
    float z = x[i] * kInvSqrt2;
    z = z > 4.0f ? 4.0f : (z < -4.0f ? -4.0f : z);
    const float z2 = z * z;
    float p = z2 * kA13 + kA11;
    p = z2 * p + kA9;
    p = z2 * p + kA7;
    p = z2 * p + kA5;
    p = z2 * p + kA3;
    p = z2 * p + kA1;
    p *= z;
    float q = z2 * kB8 + kB6;
    q = z2 * q + kB4;
    q = z2 * q + kB2;
    q = z2 * q + kB0;
    x[i] = x[i] * 0.5f * (1.0f + p / q);
  }
}

BertModel::BertModel(BertConfig config, ThreadPool* pool, LoadOptions options)
    : bert_(std::move(config)), pool_(pool), options_(options) {}

KvLayout BertModel::kv_layout(int32_t block_size, KvDType dtype) const {
  // Never read or written: the smallest layout KvStorage accepts, so that the engine's
  // block accounting (admission, the sequence cap) runs unchanged at 8 bytes per token.
  KvLayout layout;
  layout.num_layers = 1;
  layout.num_kv_heads = 1;
  layout.head_dim = 1;
  layout.block_size = block_size;
  layout.dtype = dtype == KvDType::kF32 ? dtype : KvDType::kF32;
  return layout;
}

int64_t BertModel::linear_weight_bytes() const {
  int64_t bytes = 0;
  for (const Layer& layer : layers_) {
    bytes += layer.qkv.size_bytes() + layer.attn_out.size_bytes() + layer.up.size_bytes() + layer.down.size_bytes();
  }
  return bytes;
}

std::string BertModel::linear_weight_formats() const { return LoadOptionsName(options_); }

void BertModel::Run(const ForwardBatch& batch, KvStorage&, std::span<float> logits, std::span<float> hidden) {
  const int64_t h = bert_.model.hidden_size;
  CHECK(logits.empty() && batch.logits_rows.empty()) << "an encoder has no logits";
  CHECK_EQ(hidden.size(), batch.hidden_rows.size() * static_cast<size_t>(h));
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  int64_t max_len = 0;
  for (const SequenceChunk& seq : batch.sequences) {
    CHECK(seq.start_position == 0 && seq.num_tokens <= bert_.model.max_position_embeddings)
        << "an encoder runs whole inputs of at most max_position_embeddings tokens";
    max_len = std::max<int64_t>(max_len, seq.num_tokens);
  }
  const size_t num_heads_total = batch.sequences.size() * static_cast<size_t>(bert_.model.num_heads);
  x_.resize(std::max(x_.size(), static_cast<size_t>(num_tokens * h)));
  qkv_.resize(std::max(qkv_.size(), static_cast<size_t>(num_tokens * 3 * h)));
  attn_.resize(std::max(attn_.size(), static_cast<size_t>(num_tokens * h)));
  tmp_.resize(std::max(tmp_.size(), static_cast<size_t>(num_tokens * h)));
  mlp_.resize(std::max(mlp_.size(), static_cast<size_t>(num_tokens * bert_.model.intermediate_size)));
  scratch_.resize(std::max(scratch_.size(), num_heads_total * ScratchFloats(max_len, bert_.model.head_dim)));
  Embed(batch);
  for (const Layer& layer : layers_) RunLayer(layer, batch);
  for (size_t i = 0; i < batch.hidden_rows.size(); ++i) {
    const float* row = x_.data() + static_cast<int64_t>(batch.hidden_rows[i]) * h;
    std::copy(row, row + h, hidden.data() + i * h);
  }
}

// x = LayerNorm(word[id] + position[p] + token_type[0]).
void BertModel::Embed(const ForwardBatch& batch) {
  const int64_t h = bert_.model.hidden_size;
  for (const SequenceChunk& seq : batch.sequences) {
    for (int32_t i = 0; i < seq.num_tokens; ++i) {
      const int32_t id = batch.token_ids[seq.token_begin + i];
      CHECK(id >= 0 && id < bert_.model.vocab_size) << "token id " << id << " outside the vocabulary";
      const float* word = word_embeddings_.data() + static_cast<int64_t>(id) * h;
      const float* position = position_embeddings_.data() + static_cast<int64_t>(seq.start_position + i) * h;
      float* out = x_.data() + static_cast<int64_t>(seq.token_begin + i) * h;
      for (int64_t j = 0; j < h; ++j) out[j] = word[j] + position[j] + token_type_row_[j];
    }
  }
  const int64_t num_tokens = static_cast<int64_t>(batch.token_ids.size());
  const float eps = static_cast<float>(bert_.layer_norm_eps);
  auto norm = [&](int64_t begin, int64_t end) {
    LayerNormRows(x_.data() + begin * h, embed_norm_weight_.data(), embed_norm_bias_.data(), end - begin, h, eps,
                  x_.data() + begin * h);
  };
  pool_ ? pool_->ParallelFor(num_tokens, norm) : norm(0, num_tokens);
}

// Post-LN: x = LN(x + attn(x)); x = LN(x + down(gelu(up(x)))).
void BertModel::RunLayer(const Layer& layer, const ForwardBatch& batch) {
  const int64_t h = bert_.model.hidden_size;
  const int64_t inter = bert_.model.intermediate_size;
  const int64_t n = static_cast<int64_t>(batch.token_ids.size());
  const float eps = static_cast<float>(bert_.layer_norm_eps);
  MatMul(x_.data(), n, layer.qkv.matrix(), layer.qkv_bias.data(), qkv_.data(), pool_);
  Attention(batch);
  MatMul(attn_.data(), n, layer.attn_out.matrix(), layer.attn_out_bias.data(), tmp_.data(), pool_);
  auto residual_norm = [&](const std::vector<float>& weight, const std::vector<float>& bias) {
    auto rows = [&](int64_t begin, int64_t end) {
      AddInPlace(x_.data() + begin * h, tmp_.data() + begin * h, (end - begin) * h);
      LayerNormRows(tmp_.data() + begin * h, weight.data(), bias.data(), end - begin, h, eps, x_.data() + begin * h);
    };
    pool_ ? pool_->ParallelFor(n, rows) : rows(0, n);
  };
  residual_norm(layer.attn_norm_weight, layer.attn_norm_bias);
  MatMul(x_.data(), n, layer.up.matrix(), layer.up_bias.data(), mlp_.data(), pool_);
  auto gelu = [&](int64_t begin, int64_t end) { GeluErf(mlp_.data() + begin * inter, (end - begin) * inter); };
  pool_ ? pool_->ParallelFor(n, gelu) : gelu(0, n);
  MatMul(mlp_.data(), n, layer.down.matrix(), layer.down_bias.data(), tmp_.data(), pool_);
  residual_norm(layer.out_norm_weight, layer.out_norm_bias);
}

// Every (sequence, head) on its own, in parallel: all of a sequence's tokens attend to all
// of them (no mask is needed inside a sequence: inputs are never padded).
void BertModel::Attention(const ForwardBatch& batch) {
  const int64_t num_heads = bert_.model.num_heads;
  int64_t max_len = 0;
  for (const SequenceChunk& seq : batch.sequences) max_len = std::max<int64_t>(max_len, seq.num_tokens);
  const int64_t stride = ScratchFloats(max_len, bert_.model.head_dim);
  const int64_t num_items = static_cast<int64_t>(batch.sequences.size()) * num_heads;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      AttendHead(batch.sequences[item / num_heads], item % num_heads, scratch_.data() + item * stride);
    }
  };
  pool_ ? pool_->ParallelFor(num_items, 1, run) : run(0, num_items);
}

void BertModel::AttendHead(const SequenceChunk& seq, int64_t head, float* scratch) {
  const int64_t h = bert_.model.hidden_size;
  const int64_t d = bert_.model.head_dim;
  const int64_t len = seq.num_tokens;
  float* q = scratch;            // [len, d]
  float* k = q + len * d;        // [len, d]
  float* vt = k + len * d;       // [d, len]
  float* scores = vt + len * d;  // [len, len]
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int64_t t = 0; t < len; ++t) {
    const float* row = qkv_.data() + (seq.token_begin + t) * 3 * h + head * d;
    for (int64_t j = 0; j < d; ++j) {
      q[t * d + j] = row[j] * scale;
      k[t * d + j] = row[h + j];
      vt[j * len + t] = row[2 * h + j];
    }
  }
  const SimdLevel level = ActiveSimdLevel();
  MatMulWithLevel(level, q, len, F32Weight(k, len, d), nullptr, scores, nullptr);
  for (int64_t t = 0; t < len; ++t) Softmax(scores + t * len, len);
  float* out = q;  // [len, d]: q is spent
  MatMulWithLevel(level, scores, len, F32Weight(vt, d, len), nullptr, out, nullptr);
  for (int64_t t = 0; t < len; ++t) {
    std::copy(out + t * d, out + (t + 1) * d, attn_.data() + (seq.token_begin + t) * h + head * d);
  }
}

}  // namespace surge
