#include "model/model_weights.h"

#include <algorithm>
#include <string>
#include <vector>

namespace surge {

int64_t LinearWeightBytes(const ModelWeights& weights) {
  int64_t bytes = weights.lm_head.size_bytes();
  for (const LayerWeights& l : weights.layers) {
    bytes += l.qkv.size_bytes() + l.o_proj.size_bytes() + l.gate_up.size_bytes() +
             l.down.size_bytes();
    if (l.mla) {
      bytes += l.mla->q_b.size_bytes() + l.mla->k_up_all.size_bytes() +
               l.mla->v_up_all.size_bytes();
      for (const PackedWeight& w : l.mla->k_up_transposed) bytes += w.size_bytes();
      for (const PackedWeight& w : l.mla->v_up) bytes += w.size_bytes();
    }
    if (l.moe) {
      bytes += l.moe->router.size_bytes();
      for (const MoeWeights::Expert& e : l.moe->experts) {
        bytes += e.gate_up.size_bytes() + e.down.size_bytes();
      }
    }
  }
  return bytes;
}

std::string LinearWeightFormats(const ModelWeights& weights) {
  std::vector<std::string> names;
  auto add = [&names](const Linear& linear) {
    if (linear.weight.empty()) return;
    const WeightMatrix& m = linear.matrix();
    std::string name = WeightDTypeName(m.dtype);
    if (m.dtype == WeightDType::kInt4 || m.dtype == WeightDType::kInt8Groups)
      name += "-g" + std::to_string(m.group_size);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const LayerWeights& l : weights.layers) {
    for (const Linear* linear : {&l.qkv, &l.o_proj, &l.gate_up, &l.down}) add(*linear);
    if (l.moe) {
      for (const MoeWeights::Expert& e : l.moe->experts) add(e.gate_up), add(e.down);
    }
  }
  add(weights.lm_head);
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : "+") + name;
  return joined;
}

}  // namespace surge
