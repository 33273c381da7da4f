// Differential check against tokenizers.js or HF tokenizers: reads the JSON that
// tests/node/tokenizer_reference.mjs (or tests/reference/tokenizer_hf_reference.py) wrote
// and compares surge's Tokenizer on every string
// (encode with and without special tokens, decode with and without skipping specials,
// streaming decode) and on random id lists (decode). Exits 1 on any mismatch, printing
// the first few of each kind. A tokenizer's "dir" may be a .gguf file: its tokenizer is
// built from the file's metadata, as `surge serve` builds it. A null expected decode is
// not compared (counted as "decode_not_compared"; tokenizer_hf_reference.py says when).
//
// usage: tokenizer_diff_check REFERENCE.json
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "base/utf8.h"
#include "gguf/gguf_file.h"
#include "tokenizer/gguf_vocab_io.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

using Json = nlohmann::json;
constexpr int kMaxReportsPerKind = 5;

std::string Quote(const std::string& text) {
  return Json(text).dump(-1, ' ', true, Json::error_handler_t::replace);
}

std::string IdsText(const std::vector<int32_t>& ids) { return Json(ids).dump(); }

// Pass and fail counts per kind of check for one tokenizer.
class Tally {
 public:
  explicit Tally(std::string name) : name_(std::move(name)) {}
  void Check(const std::string& kind, bool ok, const std::string& detail) {
    auto& [num_passed, num_failed] = counts_[kind];
    if (ok) {
      ++num_passed;
      return;
    }
    if (++num_failed <= kMaxReportsPerKind) std::printf("MISMATCH %s %s: %s\n", name_.c_str(), kind.c_str(), detail.c_str());
  }
  int Summarize() const {
    int num_failed_total = 0;
    std::printf("%s:", name_.c_str());
    for (const auto& [kind, counts] : counts_) {
      std::printf(" %s %d/%d", kind.c_str(), counts.first, counts.first + counts.second);
      num_failed_total += counts.second;
    }
    std::printf("%s\n", num_failed_total == 0 ? "  (100%)" : "  FAILED");
    return num_failed_total;
  }

 private:
  std::string name_;
  std::map<std::string, std::pair<int, int>> counts_;
};

// Streams `ids` through an IncrementalDecoder; every piece must be valid UTF-8 and their
// concatenation must equal `expected`.
void CheckIncremental(const Tokenizer& tokenizer, const std::vector<int32_t>& ids, bool skip,
                      const std::string& expected, const std::string& what, Tally* tally) {
  IncrementalDecoder decoder(tokenizer, skip);
  std::string streamed;
  bool all_valid = true;
  for (int32_t id : ids) {
    std::string piece = decoder.Add(id);
    all_valid &= IsValidUtf8(piece);
    streamed += piece;
  }
  streamed += decoder.Flush();
  tally->Check(skip ? "stream_skip" : "stream_keep", all_valid && streamed == expected,
               what + " ids " + IdsText(ids) + " want " + Quote(expected) + " got " + Quote(streamed));
}

StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path) {
  const std::string suffix = ".gguf";
  if (path.size() < suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return Tokenizer::FromDirectory(path);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(path));
  return TokenizerFromGguf(*file);
}

int CheckTokenizer(const Json& reference, const std::vector<std::string>& corpus) {
  const std::string name = reference.at("name");
  auto loaded = Load(reference.at("dir"));
  if (!loaded.ok()) {
    std::printf("%s: cannot load: %s\n", name.c_str(), loaded.status().ToString().c_str());
    return 1;
  }
  const Tokenizer& tokenizer = **loaded;
  Tally tally(name);
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string& text = corpus[i];
    const auto want = reference.at("encode")[i].get<std::vector<int32_t>>();
    const auto want_plain = reference.at("encode_plain")[i].get<std::vector<int32_t>>();
    const std::vector<int32_t> got = tokenizer.Encode(text);
    tally.Check("encode", got == want, Quote(text) + " want " + IdsText(want) + " got " + IdsText(got));
    const std::vector<int32_t> got_plain = tokenizer.Encode(text, false);
    tally.Check("encode_plain", got_plain == want_plain,
                Quote(text) + " want " + IdsText(want_plain) + " got " + IdsText(got_plain));
    if (reference.at("decode_skip")[i].is_null() || reference.at("decode_keep")[i].is_null()) {
      tally.Check("decode_not_compared", true, "");
      continue;
    }
    const std::string skip = reference.at("decode_skip")[i];
    const std::string keep = reference.at("decode_keep")[i];
    tally.Check("decode_skip", tokenizer.Decode(want, true) == skip,
                IdsText(want) + " want " + Quote(skip) + " got " + Quote(tokenizer.Decode(want, true)));
    tally.Check("decode_keep", tokenizer.Decode(want, false) == keep,
                IdsText(want) + " want " + Quote(keep) + " got " + Quote(tokenizer.Decode(want, false)));
    CheckIncremental(tokenizer, want, true, skip, Quote(text), &tally);
    CheckIncremental(tokenizer, want, false, keep, Quote(text), &tally);
  }
  const Json& random_ids = reference.at("random_ids");
  for (size_t i = 0; i < random_ids.size(); ++i) {
    const auto ids = random_ids[i].get<std::vector<int32_t>>();
    if (reference.at("random_decode_skip")[i].is_null() || reference.at("random_decode_keep")[i].is_null()) {
      tally.Check("random_decode_not_compared", true, "");
      continue;
    }
    const std::string skip = reference.at("random_decode_skip")[i];
    const std::string keep = reference.at("random_decode_keep")[i];
    tally.Check("random_decode", tokenizer.Decode(ids, true) == skip && tokenizer.Decode(ids, false) == keep,
                IdsText(ids) + " want " + Quote(skip) + " / " + Quote(keep) + " got " +
                    Quote(tokenizer.Decode(ids, true)) + " / " + Quote(tokenizer.Decode(ids, false)));
    CheckIncremental(tokenizer, ids, true, skip, "random", &tally);
    CheckIncremental(tokenizer, ids, false, keep, "random", &tally);
  }
  return tally.Summarize();
}

int Run(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    std::printf("%s\n", text.status().ToString().c_str());
    return 1;
  }
  const Json reference = Json::parse(*text);
  const auto corpus = reference.at("corpus").get<std::vector<std::string>>();
  std::printf("corpus: %zu strings (reference: %s)\n", corpus.size(),
              reference.at("generator").get<std::string>().c_str());
  int num_failed = 0;
  for (const Json& tokenizer : reference.at("tokenizers")) num_failed += CheckTokenizer(tokenizer, corpus);
  std::printf("%s\n", num_failed == 0 ? "all identical" : "MISMATCHES FOUND");
  return num_failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace surge

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tokenizer_diff_check REFERENCE.json\n");
    return 2;
  }
  return surge::Run(argv[1]);
}
