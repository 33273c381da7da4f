#include "apps/speculative_flags.h"

#include "base/logging.h"
#include "engine/spec_decode/draft_proposer.h"
#include "engine/spec_decode/mtp_proposer.h"
#include "engine/spec_decode/ngram_proposer.h"

namespace surge {

void RegisterSpeculativeFlags(FlagParser& parser, SpeculativeFlags& f) {
  parser.AddString("speculative", &f.method,
                   "speculative decoding: none (default) | ngram (prompt lookup) | draft (a smaller model, or the "
                   "target's own weights quantized) | mtp (DeepSeek-V3's multi-token-prediction layer)");
  parser.AddInt("num-speculative-tokens", &f.num_tokens,
                "most tokens proposed per sequence and step, in [1, 16] (default 4; each sequence adapts its own)");
  parser.AddInt("speculative-max-decodes", &f.max_decodes,
                "a step with more decoding sequences than this speculates for none: there the pass is "
                "compute-bound (default 4, measured on the 110M model: docs/BENCH.md)");
  parser.AddInt("ngram-min", &f.ngram_min, "--speculative ngram: shortest suffix matched (default 1)");
  parser.AddInt("ngram-max", &f.ngram_max, "--speculative ngram: longest suffix matched (default 4)");
  parser.AddString("draft-model", &f.draft_model,
                   "--speculative draft: the draft model (same tokenizer as the target; default: the target's own "
                   "weights, quantized by --draft-quantize)");
  parser.AddString("draft-quantize", &f.draft_quantize,
                   "--speculative draft: the draft's weights: int8 (default for a self-draft: measured faster than int4, "
                   "docs/BENCH.md) | int4 | none "
                   "(default for --draft-model)");
}

StatusOr<SpeculativeConfig> ToSpeculativeConfig(const SpeculativeFlags& f, const FlagParser& parser) {
  SpeculativeConfig config;
  StatusOr<SpeculativeMethod> method = ParseSpeculativeMethod(f.method);
  if (!method.ok()) return InvalidArgumentError("--speculative: " + method.status().message());
  config.method = *method;
  const auto refuse_unless = [&](SpeculativeMethod wanted, std::initializer_list<const char*> names) -> Status {
    for (const char* name : names) {
      if (parser.seen(name) && config.method != wanted) {
        return InvalidArgumentError(std::string("--") + name + " needs --speculative " +
                                    std::string(SpeculativeMethodName(wanted)));
      }
    }
    return OkStatus();
  };
  RETURN_IF_ERROR(refuse_unless(SpeculativeMethod::kNgram, {"ngram-min", "ngram-max"}));
  RETURN_IF_ERROR(refuse_unless(SpeculativeMethod::kDraft, {"draft-model", "draft-quantize"}));
  if (config.method == SpeculativeMethod::kNone) {
    for (const char* name : {"num-speculative-tokens", "speculative-max-decodes"}) {
      if (parser.seen(name)) return InvalidArgumentError(std::string("--") + name + " needs --speculative");
    }
    return config;
  }
  if (f.num_tokens < 1 || f.num_tokens > kMaxSpeculativeTokens) {
    return InvalidArgumentError("--num-speculative-tokens must be in [1, " + std::to_string(kMaxSpeculativeTokens) + "]");
  }
  if (f.max_decodes < 1 || f.max_decodes > 1 << 20) return InvalidArgumentError("--speculative-max-decodes must be >= 1");
  if (f.ngram_min < 1 || f.ngram_min > 64) return InvalidArgumentError("--ngram-min must be in [1, 64]");
  if (f.ngram_max < f.ngram_min || f.ngram_max > 64) {
    return InvalidArgumentError("--ngram-max must be in [--ngram-min, 64]");
  }
  config.num_tokens = static_cast<int32_t>(f.num_tokens);
  config.max_decodes = static_cast<int32_t>(f.max_decodes);
  config.ngram_min = static_cast<int32_t>(f.ngram_min);
  config.ngram_max = static_cast<int32_t>(f.ngram_max);
  config.draft_model = f.draft_model;
  const std::string quantize = !f.draft_quantize.empty() ? f.draft_quantize : f.draft_model.empty() ? "int8" : "none";
  if (quantize == "int4") {
    config.draft_quantize = Quantization::kInt4;
  } else if (quantize == "int8") {
    config.draft_quantize = Quantization::kInt8;
  } else if (quantize == "none") {
    config.draft_quantize = Quantization::kNone;
  } else {
    return InvalidArgumentError("--draft-quantize must be int4, int8 or none, got '" + quantize + "'");
  }
  if (config.method == SpeculativeMethod::kDraft && f.draft_model.empty() && config.draft_quantize == Quantization::kNone) {
    return InvalidArgumentError("--draft-quantize none without --draft-model would draft with the target itself");
  }
  return config;
}

namespace {

// A step's draft catch-up: the prompt slice the target itself takes while others decode,
// so that a long new prompt costs the decoding sequences no more in the draft than in the
// target (the bound of --max-prefill-tokens-with-decodes).
int32_t DraftCatchUpTokens(const EngineOptions& engine) {
  return engine.max_prefill_tokens_with_decodes > 0 ? engine.max_prefill_tokens_with_decodes
                                                    : engine.max_num_batched_tokens;
}

}  // namespace

StatusOr<Speculation> StartSpeculation(const SpeculativeConfig& config, const std::string& target_dir,
                                       const LoadOptions& target_load, Model& target, ThreadPool* pool,
                                       EngineOptions* engine) {
  Speculation speculation;
  engine->num_speculative_tokens = config.num_tokens;
  engine->speculative_max_decodes = config.max_decodes;
  switch (config.method) {
    case SpeculativeMethod::kNone:
      return speculation;
    case SpeculativeMethod::kMtp: {
      // As many blocks as the target's cache (the same positions), plus each sequence's
      // chained guesses.
      const KvLayout target_layout = target.kv_layout(engine->block_size, engine->kv_dtype);
      const int64_t num_blocks = engine->kv_cache_bytes / static_cast<int64_t>(target_layout.bytes_per_block()) +
                                 engine->max_num_seqs * (kMaxSpeculativeTokens / engine->block_size + 1);
      ASSIGN_OR_RETURN(std::unique_ptr<MtpProposer> proposer,
                       MtpProposer::Create(target, engine->block_size,
                                           static_cast<int32_t>(std::min<int64_t>(num_blocks, 1 << 30))));
      LOG(INFO) << "speculative decoding: MTP layer " << target.config().num_layers << " of " << target_dir << ", "
                << num_blocks << " KV blocks";
      speculation.proposer = std::move(proposer);
      break;
    }
    case SpeculativeMethod::kNgram:
      speculation.proposer = std::make_shared<NgramProposer>(config.ngram_min, config.ngram_max);
      break;
    case SpeculativeMethod::kDraft: {
      LoadOptions load = config.draft_model.empty() ? target_load : LoadOptions{};
      load.quantize = config.draft_quantize;
      const std::string& dir = config.draft_model.empty() ? target_dir : config.draft_model;
      StatusOr<std::unique_ptr<Model>> draft = Model::Load(dir, pool, load);
      if (!draft.ok()) return draft.status().WithContext("--draft-model " + dir);
      speculation.draft = std::move(*draft);
      const KvLayout layout = speculation.draft->kv_layout(engine->block_size);
      const int64_t num_blocks = std::max<int64_t>(1, engine->kv_cache_bytes / static_cast<int64_t>(layout.bytes_per_block()));
      ASSIGN_OR_RETURN(std::unique_ptr<DraftModelProposer> proposer,
                       DraftModelProposer::Create(*speculation.draft, target.config().vocab_size, engine->block_size,
                                                  static_cast<int32_t>(std::min<int64_t>(num_blocks, 1 << 30)),
                                                  DraftCatchUpTokens(*engine)));
      LOG(INFO) << "speculative decoding: draft " << dir << " (" << speculation.draft->linear_weight_formats() << ", "
                << speculation.draft->linear_weight_bytes() / (1 << 20) << " MiB of linear layers), "
                << num_blocks << " KV blocks";
      speculation.proposer = std::move(proposer);
      break;
    }
  }
  LOG(INFO) << "speculative decoding: " << SpeculativeMethodName(config.method) << ", up to " << config.num_tokens
            << " tokens per sequence, while at most " << config.max_decodes << " sequences decode";
  engine->proposer = speculation.proposer;
  return speculation;
}

}  // namespace surge
