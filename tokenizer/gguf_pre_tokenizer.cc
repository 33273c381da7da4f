#include "tokenizer/gguf_pre_tokenizer.h"


namespace surge {
namespace {

// The regexes, in the Oniguruma syntax of tokenizer.json. Where llama.cpp spells a
// tokenizer.json regex differently (ASCII case classes for (?i:...)), both mean the same
// here because (?i:...) folds ASCII only. Where llama.cpp lists GPT-2's regex without its
// last alternative `|\s+`, its hand-written GPT-2 splitter (which that exact string
// selects) implements the full GPT-2 regex, so the full one is used.
constexpr const char* kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
constexpr const char* kContractions = R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))re";
constexpr const char* kLlama3Tail =
    R"re(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kQwen2Tail =
    R"re(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kQwen35Tail =
    R"re(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kSeedCoderTail =
    R"re(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kBailing =
    R"re('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re";
// Upper-then-lower letter runs (o200k / Tekken), via lookaheads.
constexpr const char* kUpperLower =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+)re";
constexpr const char* kUpperRun =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*)re";
constexpr const char* kDeepSeek3Main =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// deepseek-llm's letters: the cased-letter ranges (Lu, Ll, Lt) llama.cpp lists.
constexpr const char* kDeepSeekLlmLetters =
    R"re(\s?[\x{41}-\x{5A}\x{61}-\x{7A}\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})re"
    R"re(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}-\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1})re"
    R"re(\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD})re"
    R"re(\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15})re"
    R"re(\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})re"
    R"re(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB})re"
    R"re(\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D})re"
    R"re(\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E})re"
    R"re(\x{2183}-\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}-\x{2CF3}\x{A640}-\x{A66D})re"
    R"re(\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06})re"
    R"re(\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB})re"
    R"re(\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re";
constexpr const char* kCjkHangul = R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";
constexpr const char* kNordic = R"re( ?[^(\s|.,!?…。，、।۔،)]+)re";

enum class Family {
  kDefault, kLlama3, kDeepSeekLlm, kDeepSeekCoder, kDeepSeek3, kFalcon, kStarCoder, kGpt2,
  kQwen2, kQwen35, kBloom, kViking, kTekken, kGpt4o, kSeedCoder, kBailing,
};

std::vector<std::string> Regexes(Family family) {
  const std::string contractions = kContractions;
  switch (family) {
    case Family::kDefault:
      return {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"};
    case Family::kLlama3: return {contractions + kLlama3Tail};
    case Family::kDeepSeekLlm:
      return {R"re([\r\n])re", kDeepSeekLlmLetters,
              R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re",
              R"re(\s+$)re", kCjkHangul, R"re(\p{N}+)re"};
    case Family::kDeepSeekCoder:
      return {R"re([\r\n])re", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kCjkHangul, R"re(\p{N})re"};
    case Family::kDeepSeek3:
      return {R"re(\p{N}{1,3})re", R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re", kDeepSeek3Main};
    case Family::kFalcon: return {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"};
    case Family::kStarCoder: return {R"re(\p{N})re", kGpt2};
    case Family::kGpt2: return {kGpt2};
    case Family::kQwen2: return {contractions + kQwen2Tail};
    case Family::kQwen35: return {contractions + kQwen35Tail};
    case Family::kBloom: return {kNordic};
    case Family::kViking: return {kNordic, R"re(\p{N})re"};
    case Family::kTekken:
      return {std::string(kUpperLower) + "|" + kUpperRun +
              R"re(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case Family::kGpt4o:
      return {std::string(kUpperLower) + contractions + "?|" + kUpperRun + contractions +
              R"re(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"};
    case Family::kSeedCoder: return {contractions + kSeedCoderTail};
    case Family::kBailing: return {kBailing};
  }
  return {};
}

struct Entry {
  std::vector<const char*> names;
  Family family;
  bool clean_spaces = true;
  bool ignore_merges = false;
  bool add_bos = false;
  bool has_bos = true;
};

// llama-vocab.cpp's name -> (regexes, flags) table for the families above.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      {{"default"}, Family::kDefault},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
       Family::kLlama3, true, true, true},
      {{"dbrx", "smaug-bpe"}, Family::kLlama3},
      {{"chatglm-bpe", "glm4"}, Family::kLlama3, true, false, false, false},
      {{"deepseek-llm"}, Family::kDeepSeekLlm, false},
      {{"deepseek-coder"}, Family::kDeepSeekCoder, false},
      {{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"}, Family::kDeepSeek3, false},
      {{"falcon"}, Family::kFalcon},
      {{"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"}, Family::kStarCoder},
      {{"command-r", "smollm"}, Family::kStarCoder, false},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "exaone4", "mpt", "olmo", "jais", "jina-v1-en", "jina-v2-code", "roberta-bpe"},
       Family::kGpt2},
      {{"trillion", "granite-docling"}, Family::kGpt2, false},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"}, Family::kQwen2, false},
      {{"megrez", "stablelm2"}, Family::kQwen2},
      {{"qwen35"}, Family::kQwen35, false},
      {{"bloom", "gpt3-finnish"}, Family::kBloom},
      {{"poro-chat"}, Family::kBloom, false},
      {{"viking"}, Family::kViking, false},
      {{"tekken"}, Family::kTekken, false, true, true},
      {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, Family::kGpt4o, false},
      {{"seed-coder"}, Family::kSeedCoder, false},
      {{"bailingmoe", "bailingmoe2", "llada-moe"}, Family::kBailing, false},
  };
  return table;
}

}  // namespace

StatusOr<GgufPreTokenizerSpec> LookUpGgufPreTokenizer(std::string_view pre) {
  if (pre.empty()) pre = "default";  // llama.cpp warns and uses "default"
  for (const Entry& entry : Table()) {
    for (const char* name : entry.names) {
      if (pre != name) continue;
      GgufPreTokenizerSpec spec;
      spec.regexes = Regexes(entry.family);
      spec.clean_spaces = entry.clean_spaces;
      spec.ignore_merges = entry.ignore_merges;
      spec.add_bos = entry.add_bos;
      spec.has_bos = entry.has_bos;
      return spec;
    }
  }
  return UnimplementedError("tokenizer.ggml.pre '" + std::string(pre) +
                            "' is not a supported pre-tokenizer (supported: llama-bpe, qwen2, deepseek-v3, "
                            "deepseek-llm, gpt-2, default and the other names of tokenizer/README.md)");
}

std::vector<std::string> SupportedGgufPreTokenizers() {
  std::vector<std::string> names;
  for (const Entry& entry : Table()) {
    for (const char* name : entry.names) names.push_back(name);
  }
  return names;
}

}  // namespace surge
