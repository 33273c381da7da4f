// surge convert: a Hugging Face Llama/Qwen2/DeepSeek directory -> a GGUF file
// (model/gguf_convert.h), or a llama/qwen2/qwen3 GGUF file -> a Hugging Face directory
// (model/gguf_to_hf.h, tokenizer/gguf_to_hf_tokenizer.h).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/flags.h"
#include "model/gguf_convert.h"
#include "model/gguf_to_hf.h"
#include "model/gguf_weights.h"
#include "tokenizer/gguf_to_hf_tokenizer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/gguf_vocab_io.h"

namespace surge {
namespace {

// The tokenizer metadata llama.cpp's converter would write, padded to the model's vocab.
Status WriteTokenizer(const std::string& hf_dir, const ModelConfig& config, GgufWriter& writer) {
  HfToGgufOptions options;
  options.vocab_size = config.vocab_size;
  ASSIGN_OR_RETURN(GgufVocab vocab, GgufVocabFromHfDirectory(hf_dir, options));
  WriteGgufVocab(vocab, &writer);
  return OkStatus();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out ? OkStatus() : DataLossError("failed writing " + path);
}

// tokenizer.json and tokenizer_config.json from the GGUF's tokenizer.ggml.* metadata; a
// file without a tokenizer gets none (the directory then needs --tokenizer to be served).
Status WriteHfTokenizer(const GgufFile& file, const std::string& out_dir) {
  if (!file.Has("tokenizer.ggml.model")) {
    std::fprintf(stderr, "surge convert: %s has no tokenizer metadata; no tokenizer files written\n",
                 file.path().c_str());
    return OkStatus();
  }
  ASSIGN_OR_RETURN(GgufVocab vocab, ReadGgufVocab(file));
  auto files = HfTokenizerFromGgufVocab(vocab);
  if (!files.ok()) return files.status().WithContext(file.path());
  RETURN_IF_ERROR(WriteFile(out_dir + "/tokenizer.json", files->tokenizer_json));
  return WriteFile(out_dir + "/tokenizer_config.json", files->tokenizer_config_json);
}

constexpr const char* kUsage =
    "surge convert HF_DIR OUT.gguf [--type T]\n"
    "  Writes HF_DIR's weights, config and tokenizer as a GGUF file laid out like llama.cpp's\n"
    "  (llama, qwen2; deepseek2 for DeepSeek V2/V3/R1). q4_k_m: Q4_K, with Q6_K for the output\n"
    "  matrix and for attn_v/ffn_down in llama.cpp's 'more bits' layers.\n"
    "surge convert MODEL.gguf OUT_DIR [--dtype bf16|f32]\n"
    "  Writes a llama/qwen2/qwen3 GGUF file as a Hugging Face directory: model.safetensors (every\n"
    "  tensor dequantized to --dtype, llama's Q/K rows back in HF's rotary order), config.json,\n"
    "  generation_config.json, tokenizer.json and tokenizer_config.json (with the chat template).\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "surge convert: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int Report(const Status& status, const std::string& written) {
  if (!status.ok()) {
    std::fprintf(stderr, "surge convert: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s\n", written.c_str());
  return 0;
}

}  // namespace

int RunConvert(const std::vector<std::string>& args) {
  std::string type_name = "f16";
  std::string dtype_name = "bf16";
  bool help = false;
  FlagParser flags("convert");
  flags.AddString("type", &type_name, "HF -> GGUF: f32 | f16 (default) | bf16 | q8_0 | q4_0 | q4_k_m | q6_k");
  flags.AddString("dtype", &dtype_name, "GGUF -> HF: the safetensors' dtype, bf16 (default) | f32");
  flags.AddBool("help", &help, "show this help");
  std::vector<std::string> positional, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].empty() && args[i][0] != '-') {
      positional.push_back(args[i]);
    } else {
      rest.push_back(args[i]);
      if ((args[i] == "--type" || args[i] == "--dtype") && i + 1 < args.size()) rest.push_back(args[++i]);
    }
  }
  Status parsed = flags.Parse(rest);
  if (help) return std::printf("%s%s", kUsage, flags.Usage().c_str()), 0;
  if (!parsed.ok()) return Usage(parsed.message());
  if (positional.size() != 2) return Usage("need a source (HF_DIR or MODEL.gguf) and a destination");
  if (IsGgufPath(positional[0])) {
    if (flags.seen("type")) return Usage("--type is for HF_DIR -> GGUF; a GGUF source takes --dtype");
    if (dtype_name != "bf16" && dtype_name != "f32") return Usage("--dtype must be bf16 or f32, got '" + dtype_name + "'");
    const TensorDType dtype = dtype_name == "f32" ? TensorDType::kF32 : TensorDType::kBF16;
    return Report(ConvertGgufToHf(positional[0], positional[1], dtype, WriteHfTokenizer),
                  positional[1] + " (Hugging Face, " + dtype_name + ")");
  }
  if (flags.seen("dtype")) return Usage("--dtype is for MODEL.gguf -> HF_DIR; a Hugging Face source takes --type");
  StatusOr<GgufFileType> type = ParseGgufFileType(type_name);
  if (!type.ok()) return Usage(type.status().message());
  return Report(ConvertHfToGguf(positional[0], positional[1], *type, WriteTokenizer),
                positional[1] + " (" + GgufFileTypeName(*type) + ")");
}

}  // namespace surge
