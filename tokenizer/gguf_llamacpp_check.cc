// surge's GGUF tokenizers against llama.cpp's own, on the same .gguf files:
//   --write REFERENCE.json DIR      writes DIR/NAME.gguf (vocab-only: tokenizer metadata
//                                   from GgufVocabFromHfDirectory plus the llama hparams
//                                   llama.cpp needs to load it) for every tokenizer of the
//                                   reference, and DIR/NAME_placeholder.gguf with
//                                   llama.cpp's -1000 scores for SentencePiece ones;
//   --compare REFERENCE.json LLAMACPP.json DIR
//                                   compares TokenizerFromGguf(DIR/NAME.gguf) with what
//                                   tests/node/llamacpp_tokenizer_reference.mjs wrote:
//                                   encode (add_special off, specials parsed) must be
//                                   identical; decode with and without specials must be,
//                                   except for llama.cpp quirks counted apart after
//                                   checking the difference is exactly that:
//   lstrip_after_hidden  SentencePiece: llama.cpp drops the leading space of the first
//                        token even when that token is a hidden special, so the text
//                        after it keeps its space; surge drops it from the first visible
//                        token (as tokenizers does).
// Exits 1 on any other difference.
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/gguf_vocab_io.h"

namespace surge {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::string Quote(const std::string& text) { return Json(text).dump(-1, ' ', true, Json::error_handler_t::replace); }

Status WriteVocabOnly(const GgufVocab& vocab, const std::string& path) {
  GgufWriter writer;
  writer.SetString("general.architecture", "llama");
  writer.SetU32("llama.context_length", 4096);  // a tiny model's shape: llama.cpp reads
  writer.SetU32("llama.embedding_length", 64);  // the hyperparameters even vocab-only
  writer.SetU32("llama.block_count", 1);
  writer.SetU32("llama.feed_forward_length", 128);
  writer.SetU32("llama.attention.head_count", 4);
  writer.SetU32("llama.attention.head_count_kv", 4);
  writer.SetF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  writer.SetU32("llama.rope.dimension_count", 16);
  writer.SetU32("llama.vocab_size", static_cast<uint32_t>(vocab.tokens.size()));
  WriteGgufVocab(vocab, &writer);
  return writer.WriteFile(path);
}

int Write(const Json& reference, const std::string& dir) {
  fs::create_directories(dir);
  for (const Json& tokenizer : reference.at("tokenizers")) {
    const std::string name = tokenizer.at("name");
    for (HfScores scores : {HfScores::kFromMerges, HfScores::kLlamaCppPlaceholder}) {
      HfToGgufOptions options;
      options.scores = scores;
      auto vocab = GgufVocabFromHfDirectory(tokenizer.at("dir"), options);
      if (!vocab.ok()) {
        std::printf("%s: %s\n", name.c_str(), vocab.status().ToString().c_str());
        return 1;
      }
      const bool placeholder = scores == HfScores::kLlamaCppPlaceholder;
      if (placeholder && vocab->model != "llama") break;
      const std::string path = (fs::path(dir) / (name + (placeholder ? "_placeholder" : "") + ".gguf")).string();
      if (Status status = WriteVocabOnly(*vocab, path); !status.ok()) {
        std::printf("%s\n", status.ToString().c_str());
        return 1;
      }
    }
  }
  return 0;
}

// Counts per kind, explained differences apart; returns the unexplained ones.
int CompareModel(const std::string& name, const Json& expected, const Tokenizer& tokenizer,
                 const std::vector<std::string>& corpus) {
  std::map<std::string, int> passed, failed, explained;
  auto count = [&](const std::string& kind, bool ok, const std::string& detail) {
    ok ? ++passed[kind] : ++failed[kind];
    if (!ok && failed[kind] <= 3) std::printf("  MISMATCH %s %s: %s\n", name.c_str(), kind.c_str(), detail.c_str());
  };
  for (size_t i = 0; i < corpus.size(); ++i) {
    const auto ids = expected.at("encode")[i].get<std::vector<int32_t>>();
    const std::vector<int32_t> got = tokenizer.Encode(corpus[i], false);
    count("encode", got == ids, Quote(corpus[i]) + " llama.cpp " + Json(ids).dump() + " surge " + Json(got).dump());
    for (bool skip : {false, true}) {
      const std::string want = expected.at(skip ? "decode_skip" : "decode_keep")[i];
      const std::string decoded = tokenizer.Decode(ids, skip);
      bool ok = decoded == want;
      if (!ok && skip && !ids.empty() && tokenizer.IsSpecial(ids[0]) && want == " " + decoded) {
        ++explained["lstrip_after_hidden"];
        ok = true;
      }
      count(skip ? "decode_skip" : "decode_keep", ok,
            Json(ids).dump() + " llama.cpp " + Quote(want) + " surge " + Quote(decoded));
    }
  }
  int num_failed = 0;
  std::printf("%s vs llama.cpp:", name.c_str());
  for (const auto& [kind, n] : passed) {
    std::printf(" %s %d/%d", kind.c_str(), n, n + failed[kind]);
    num_failed += failed[kind];
  }
  for (const auto& [kind, n] : failed) {
    if (!passed.contains(kind)) {
      std::printf(" %s 0/%d", kind.c_str(), n);
      num_failed += n;
    }
  }
  for (const auto& [why, n] : explained) std::printf(" [%s: %d]", why.c_str(), n);
  std::printf("%s\n", num_failed == 0 ? "  (100%)" : "  FAILED");
  return num_failed;
}

int Compare(const Json& reference, const std::string& llamacpp_path, const std::string& dir) {
  auto text = ReadFileToString(llamacpp_path);
  if (!text.ok()) {
    std::printf("%s\n", text.status().ToString().c_str());
    return 1;
  }
  const Json llamacpp = Json::parse(*text);
  const auto corpus = reference.at("corpus").get<std::vector<std::string>>();
  int num_failed = 0;
  for (const auto& [name, expected] : llamacpp.at("models").items()) {
    auto file = GgufFile::Open((fs::path(dir) / (name + ".gguf")).string());
    if (!file.ok()) {
      std::printf("%s: %s\n", name.c_str(), file.status().ToString().c_str());
      ++num_failed;
      continue;
    }
    auto tokenizer = TokenizerFromGguf(**file);
    if (!tokenizer.ok()) {
      std::printf("%s: %s\n", name.c_str(), tokenizer.status().ToString().c_str());
      ++num_failed;
      continue;
    }
    num_failed += CompareModel(name, expected, **tokenizer, corpus);
  }
  std::printf("%s\n", num_failed == 0 ? "surge's GGUF tokenizers agree with llama.cpp" : "MISMATCHES FOUND");
  return num_failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace surge

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "--write" && argc == 4) || (mode == "--compare" && argc == 5))) {
    std::fprintf(stderr,
                 "usage: gguf_llamacpp_check --write REFERENCE.json DIR\n"
                 "       gguf_llamacpp_check --compare REFERENCE.json LLAMACPP.json DIR\n");
    return 2;
  }
  auto text = surge::ReadFileToString(argv[2]);
  if (!text.ok()) {
    std::printf("%s\n", text.status().ToString().c_str());
    return 1;
  }
  const auto reference = nlohmann::json::parse(*text);
  return mode == "--write" ? surge::Write(reference, argv[3]) : surge::Compare(reference, argv[3], argv[4]);
}
