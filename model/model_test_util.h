// Helpers shared by the model tests: load or die, one sequence's logits in one pass, and
// Hugging Face-style strided perplexity.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "base/logging.h"
#include "kv/kv_storage.h"
#include "model/model.h"

namespace surge {

// Writes a random HF model with tools/make_tiny_model.py FLAGS into `dir`; returns it.
inline std::string MakeTinyModel(const std::string& dir, const std::string& flags) {
  const std::string command = "/usr/bin/python3 tools/make_tiny_model.py --out " + dir + " " +
                              flags + " > /dev/null";
  CHECK(std::system(command.c_str()) == 0) << command;
  return dir;
}

// `n` ids spread over the vocabulary, the same every run.
inline std::vector<int32_t> SomeIds(int64_t vocab, int n) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((i * 37 + 11) % vocab));
  return ids;
}

// How far `got` logits are from `want`.
struct LogitError {
  double max_relative;  // max |diff| / max |logit|
  double rms_relative;  // rms diff / rms logit
};
inline LogitError CompareLogits(const std::vector<float>& want, const std::vector<float>& got) {
  double max_diff = 0, max_logit = 0, d2 = 0, l2 = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double diff = double{got[i]} - want[i];
    max_diff = std::max(max_diff, std::fabs(diff));
    max_logit = std::max(max_logit, std::fabs(double{want[i]}));
    d2 += diff * diff;
    l2 += double{want[i]} * want[i];
  }
  return {max_diff / max_logit, std::sqrt(d2 / l2)};
}

inline std::unique_ptr<Model> LoadModelOrDie(const std::string& path, ThreadPool* pool,
                                             const LoadOptions& options = {}) {
  auto model = Model::Load(path, pool, options);
  CHECK(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

// Logits [ids.size(), vocab] of one sequence fed in one pass (positions from 0), with a
// KV cache of `dtype`.
inline std::vector<float> AllLogits(Model& model, const std::vector<int32_t>& ids,
                                    KvDType dtype = KvDType::kF32) {
  const int32_t block_size = 16;
  const int32_t num_blocks = static_cast<int32_t>(ids.size() + block_size - 1) / block_size;
  KvStorage kv(model.kv_layout(block_size, dtype), num_blocks);
  std::vector<BlockId> table(num_blocks);
  std::iota(table.begin(), table.end(), 0);
  std::vector<int32_t> rows(ids.size());
  std::iota(rows.begin(), rows.end(), 0);
  const SequenceChunk chunk{0, static_cast<int32_t>(ids.size()), 0, table};
  std::vector<float> logits(ids.size() * model.config().vocab_size);
  model.Run({ids, {&chunk, 1}, rows}, kv, logits);
  return logits;
}

// Perplexity as Hugging Face's strided evaluation computes it: windows of the model's
// context (at most 512 positions), stride half a window, each window scoring only tokens
// no earlier window scored. Ids that fit one window are scored in one pass.
inline double Perplexity(Model& model, const std::vector<int32_t>& ids,
                         KvDType dtype = KvDType::kF32) {
  const int64_t window = std::min<int64_t>(512, model.config().max_position_embeddings);
  const int64_t stride = window / 2, vocab = model.config().vocab_size;
  double nll = 0;
  int64_t scored = 0, next = 1;
  for (int64_t begin = 0; next < static_cast<int64_t>(ids.size()); begin += stride) {
    const int64_t end = std::min<int64_t>(begin + window, ids.size());
    const std::vector<float> logits =
        AllLogits(model, {ids.begin() + begin, ids.begin() + end}, dtype);
    for (; next < end; ++next, ++scored) {
      const float* row = &logits[(next - 1 - begin) * vocab];
      double max = row[0], sum = 0;
      for (int64_t v = 1; v < vocab; ++v) max = std::max(max, double{row[v]});
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
      nll -= row[ids[next]] - max - std::log(sum);
    }
  }
  return std::exp(nll / scored);
}

}  // namespace surge
