// surge tokenize: encode text to ids or decode ids to text with a model's tokenizer.json.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.h"
#include "apps/serve_runtime.h"
#include "base/flags.h"
#include "base/status.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

const std::string kSummary =
    "Encodes --text to token ids ({\"ids\": [...]}) or decodes --decode ids to text\n"
    "({\"text\": \"...\"}) with the tokenizer of --model: a directory's tokenizer.json (+ tokenizer_config.json)\n"
    "or a .gguf file's metadata (default: SmolLM2-135M-Instruct, which scripts/setup.sh installs).\n";

// "1,2,3" -> ids; spaces around the numbers are allowed.
StatusOr<std::vector<int32_t>> ParseIdList(const std::string& text) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    long long value = std::strtoll(item.c_str(), &end, 10);
    while (end != nullptr && *end == ' ') ++end;
    if (item.find_first_not_of(' ') == std::string::npos || *end != '\0' || errno == ERANGE ||
        value < INT32_MIN || value > INT32_MAX) {
      return InvalidArgumentError("--decode: expected comma-separated integers, got '" + text + "'");
    }
    ids.push_back(static_cast<int32_t>(value));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return ids;
}

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct TokenizeArgs {
  std::string model;
  std::string text;
  std::string decode;
  bool no_special = false;
  bool keep_special = false;
  bool encode = false;      // --text given
  bool show_help = false;
  std::vector<int32_t> ids;  // parsed --decode
};

// Parses and checks the flags; a failure is a usage error.
Status ParseArgs(const std::vector<std::string>& args, TokenizeArgs* parsed, std::string* usage) {
  FlagParser flags("tokenize");
  flags.AddString("model", &parsed->model,
                  "model directory holding tokenizer.json, or a .gguf file (default: SmolLM2-135M-Instruct)");
  flags.AddString("text", &parsed->text, "text to encode");
  flags.AddString("decode", &parsed->decode, "comma-separated token ids to decode, e.g. 1,2,3");
  flags.AddBool("no-special", &parsed->no_special, "encode without the template's special tokens (e.g. BOS)");
  flags.AddBool("keep-special", &parsed->keep_special, "decode special tokens too instead of skipping them");
  *usage = kSummary + flags.Usage();
  for (const std::string& arg : args) parsed->show_help |= arg == "--help" || arg == "-h";
  if (parsed->show_help) return OkStatus();
  RETURN_IF_ERROR(flags.Parse(args));
  if (flags.seen("text") == flags.seen("decode")) {
    return InvalidArgumentError("need exactly one of --text or --decode (see --help)");
  }
  parsed->encode = flags.seen("text");
  if (!parsed->encode) {
    ASSIGN_OR_RETURN(parsed->ids, ParseIdList(parsed->decode));
  }
  return OkStatus();
}

}  // namespace

int RunTokenize(const std::vector<std::string>& args) {
  TokenizeArgs parsed;
  std::string usage;
  if (Status status = ParseArgs(args, &parsed, &usage); !status.ok()) {
    std::fprintf(stderr, "surge tokenize: %s\n", status.message().c_str());
    return 2;
  }
  if (parsed.show_help) {
    std::printf("%s", usage.c_str());
    return 0;
  }
  StatusOr<std::string> model = ModelOrDefault(parsed.model);
  if (!model.ok()) {
    std::fprintf(stderr, "surge tokenize: %s\n", model.status().message().c_str());
    return 1;
  }
  auto tokenizer = LoadTokenizerFor(*model, /*tokenizer_dir=*/"");
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "surge tokenize: %s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  if (parsed.encode) {
    std::printf("%s\n", Dump({{"ids", (*tokenizer)->Encode(parsed.text, !parsed.no_special)}}).c_str());
  } else {
    std::printf("%s\n", Dump({{"text", (*tokenizer)->Decode(parsed.ids, !parsed.keep_special)}}).c_str());
  }
  return 0;
}

}  // namespace surge
