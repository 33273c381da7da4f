// Speculative decoding's flags (--speculative, --num-speculative-tokens,
// --speculative-max-decodes, --ngram-min/--ngram-max, --draft-model, --draft-quantize) and
// what they build: the proposer the engine takes (engine/spec_decode/proposer.h), with the draft
// model it may own. Shared by `surge serve` and `surge generate`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/flags.h"
#include "base/status.h"
#include "engine/engine.h"
#include "engine/spec_decode/proposer.h"
#include "kernels/thread_pool.h"
#include "model/model.h"

namespace surge {

struct SpeculativeFlags {
  std::string method = "none";
  int64_t num_tokens = 4;
  int64_t max_decodes = 4;
  int64_t ngram_min = 1;
  int64_t ngram_max = 4;
  std::string draft_model;     // "": the target's own weights (self-speculation)
  std::string draft_quantize;  // int4 | int8 | none ("": int8 for a self-draft, none otherwise)
};

void RegisterSpeculativeFlags(FlagParser& parser, SpeculativeFlags& flags);

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::kNone;
  int32_t num_tokens = 4;
  int32_t max_decodes = 4;
  int32_t ngram_min = 1;
  int32_t ngram_max = 4;
  std::string draft_model;  // "": the target's
  Quantization draft_quantize = Quantization::kInt8;
};

// Errors name the flag; flags of a method not chosen are refused, not ignored.
StatusOr<SpeculativeConfig> ToSpeculativeConfig(const SpeculativeFlags& flags, const FlagParser& parser);

// The proposer and the draft model it runs (null for ngram and when off).
struct Speculation {
  std::unique_ptr<Model> draft;
  std::shared_ptr<Proposer> proposer;
};

// The target's load options for `config`: mtp needs the target's MTP layer loaded.
inline void AdjustTargetLoad(const SpeculativeConfig& config, LoadOptions* load) {
  load->load_mtp = config.method == SpeculativeMethod::kMtp;
}

// Builds what `config` asks for and sets engine->proposer and its limits. The draft model
// is `target_dir` itself unless --draft-model names another; its KV cache gets as many
// bytes as the engine's (engine->kv_cache_bytes, which must be set). mtp runs the target's
// own MTP module (loaded under AdjustTargetLoad), with a cache covering as many positions
// as the engine's.
StatusOr<Speculation> StartSpeculation(const SpeculativeConfig& config, const std::string& target_dir,
                                       const LoadOptions& target_load, Model& target, ThreadPool* pool,
                                       EngineOptions* engine);

}  // namespace surge
