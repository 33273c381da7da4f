// surge convert: a Hugging Face Llama/Qwen2/DeepSeek directory -> a GGUF file
// (model/gguf_convert.h).
#include <cstdio>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/flags.h"
#include "model/gguf_convert.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/gguf_vocab_io.h"

namespace surge {

// The tokenizer metadata llama.cpp's converter would write, padded to the model's vocab.
Status WriteTokenizer(const std::string& hf_dir, const ModelConfig& config, GgufWriter& writer) {
  HfToGgufOptions options;
  options.vocab_size = config.vocab_size;
  ASSIGN_OR_RETURN(GgufVocab vocab, GgufVocabFromHfDirectory(hf_dir, options));
  WriteGgufVocab(vocab, &writer);
  return OkStatus();
}

int RunConvert(const std::vector<std::string>& args) {
  std::string type_name = "f16";
  bool help = false;
  FlagParser flags("convert");
  flags.AddString("type", &type_name, "f32 | f16 | bf16 | q8_0 | q4_0 | q4_k_m | q6_k");
  flags.AddBool("help", &help, "show this help");
  const std::string usage =
      "surge convert HF_DIR OUT.gguf [--type T]\n"
      "Writes HF_DIR's weights, config and tokenizer as a GGUF file laid out like llama.cpp's\n"
      "(llama, qwen2; deepseek2 for DeepSeek V2/V3/R1). q4_k_m: Q4_K, with Q6_K for the output\n"
      "matrix and for attn_v/ffn_down in llama.cpp's 'more bits' layers.\n" + flags.Usage();
  std::vector<std::string> positional, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].empty() && args[i][0] != '-') {
      positional.push_back(args[i]);
    } else {
      rest.push_back(args[i]);
      if (args[i] == "--type" && i + 1 < args.size()) rest.push_back(args[++i]);
    }
  }
  Status parsed = flags.Parse(rest);
  if (help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  StatusOr<GgufFileType> type = ParseGgufFileType(type_name);
  if (!parsed.ok() || positional.size() != 2 || !type.ok()) {
    std::fprintf(stderr, "surge convert: %s\n%s",
                 !parsed.ok() ? parsed.message().c_str()
                 : !type.ok() ? type.status().message().c_str()
                              : "need HF_DIR and OUT.gguf",
                 usage.c_str());
    return 2;
  }
  Status status = ConvertHfToGguf(positional[0], positional[1], *type, WriteTokenizer);
  if (!status.ok()) {
    std::fprintf(stderr, "surge convert: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s (%s)\n", positional[1].c_str(), GgufFileTypeName(*type));
  return 0;
}

}  // namespace surge
