#include "apps/generate_flags.h"

#include <climits>
#include <utility>

namespace surge {

void RegisterGenerateFlags(FlagParser& parser, GenerateFlags& f) {
  parser.AddString("model", &f.model, "Hugging Face model directory or .gguf file (default: SmolLM2-135M-Instruct, which "
                   "scripts/setup.sh installs; models/stories260K is the small one)");
  parser.AddString("tokenizer", &f.tokenizer, "Hugging Face tokenizer directory (default: the model's)");
  parser.AddString("prompt", &f.prompt, "prompt text (required)");
  parser.AddInt("max-tokens", &f.max_tokens, "most tokens to generate (default 128)");
  parser.AddDouble("temperature", &f.temperature, "0 = greedy (default), > 0 samples");
  parser.AddDouble("top-p", &f.top_p, "nucleus sampling mass (default 1)");
  parser.AddInt("top-k", &f.top_k, "keep the k most likely tokens (default -1: all)");
  parser.AddDouble("min-p", &f.min_p, "drop tokens below min_p * max prob (default 0)");
  parser.AddDouble("repetition-penalty", &f.repetition_penalty, "default 1 (off)");
  parser.AddDouble("presence-penalty", &f.presence_penalty, "default 0 (off)");
  parser.AddDouble("frequency-penalty", &f.frequency_penalty, "default 0 (off)");
  parser.AddInt("seed", &f.seed, "seed for sampling; same seed, same output (default random)");
  parser.AddInt("threads", &f.threads, "worker threads (default: all cores)");
  RegisterWeightFlags(parser, f.weights);
  RegisterSpeculativeFlags(parser, f.speculative);
  parser.AddString("kv-cache-dtype", &f.kv_cache_dtype,
                   "KV cache format: auto (= f16) | f32 | bf16 | f16 | int8 | int4 (default auto)");
  parser.AddBool("ignore-eos", &f.ignore_eos, "keep generating past end-of-sequence");
  parser.AddBool("json", &f.json, "print one JSON object with prompt/output ids and text");
  parser.AddBool("help", &f.help, "show this help");
}

EngineRequest ToRequest(const GenerateFlags& f, std::vector<int32_t> prompt_ids) {
  EngineRequest request;
  request.prompt_ids = std::move(prompt_ids);
  request.stop.max_tokens = static_cast<int32_t>(f.max_tokens);
  request.stop.ignore_eos = f.ignore_eos;
  SamplingParams& s = request.sampling;
  s.temperature = f.temperature;
  s.top_p = f.top_p;
  s.top_k = static_cast<int32_t>(f.top_k);
  s.min_p = f.min_p;
  s.repetition_penalty = f.repetition_penalty;
  s.presence_penalty = f.presence_penalty;
  s.frequency_penalty = f.frequency_penalty;
  if (f.seed >= 0) s.seed = static_cast<uint64_t>(f.seed);
  return request;
}


Status CheckInt32Flags(const GenerateFlags& f) {
  for (auto [name, value] : {std::pair{"max-tokens", f.max_tokens}, std::pair{"top-k", f.top_k}}) {
    if (value < INT32_MIN || value > INT32_MAX) {
      return InvalidArgumentError(std::string("--") + name + " is out of range: " + std::to_string(value));
    }
  }
  return OkStatus();
}


}  // namespace surge
