// Differential check of GGUF-built tokenizers: for every tokenizer directory in the
// reference JSON that tests/node/tokenizer_reference.mjs wrote (its corpus of 2,562
// strings), converts tokenizer.json to GGUF metadata as llama.cpp's converter does
// (GgufVocabFromHfDirectory), builds the Tokenizer from it and compares it with the
// tokenizer.json-built one:
//   encode_plain  Encode(text, false) equal;
//   encode        Encode(text, true) == [BOS if add_bos] + plain ids + [EOS if add_eos];
//   decode_skip / decode_keep  Decode of the tokenizer.json ids equal;
//   stream        IncrementalDecoder over those ids gives the GGUF tokenizer's Decode.
// Known differences of llama.cpp's semantics are counted apart, each under its own name,
// after checking that the difference is exactly that (tokenizer/README.md, "GGUF"):
//   no_nfc   Qwen's NFC normalizer, which llama.cpp does not run: the GGUF ids equal the
//            tokenizer.json ids of the NFC-normalized text.
//   control_by_text  tokens that llama.cpp makes control by their text (Qwen's "</s>",
//            a normal token there): the GGUF ids equal the tokenizer.json encoding of the
//            text with those tokens cut out first.
//   keeps_bom  a byte-order mark that starts a run of byte tokens, which llama.cpp keeps
//            and tokenizers.js drops: equal without U+FEFF.
//   llama_cpp_clean_up  llama.cpp's clean-up of spaces, which leaves " n't" alone: equal
//            once " n't" -> "n't".
//   control_by_look  added tokens that tokenizer.json calls non-special but that look
//            special (<｜User｜>), which llama.cpp's converter makes CONTROL, so that
//            Decode(skip_special_tokens) hides them: the GGUF decode equals the
//            tokenizer.json decode without them.
// SentencePiece vocabularies are checked with scores derived from the merges (the check
// that fails on any mismatch) and, for information, with llama.cpp's converter's
// placeholder scores. Exits 1 on any unexplained mismatch.
//
// usage: gguf_tokenizer_check REFERENCE.json
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "base/utf8.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

using Json = nlohmann::json;

std::string Quote(const std::string& text) { return Json(text).dump(-1, ' ', true, Json::error_handler_t::replace); }
std::string IdsText(const std::vector<int32_t>& ids) { return Json(ids).dump(); }

class Tally {
 public:
  Tally(std::string name, bool informational) : name_(std::move(name)), informational_(informational) {}
  void Count(const std::string& kind, bool ok, const std::string& detail) {
    auto& [num_passed, num_failed] = counts_[kind];
    if (ok) {
      ++num_passed;
    } else if (++num_failed <= 3) {
      std::printf("  %s %s %s: %s\n", informational_ ? "differs" : "MISMATCH", name_.c_str(), kind.c_str(),
                  detail.c_str());
    }
  }
  void Explained(const std::string& why) { ++explained_[why]; }
  // Returns the number of unexplained mismatches (0 for an informational tally).
  int Summarize() const {
    int num_failed_total = 0;
    std::printf("%s:", name_.c_str());
    for (const auto& [kind, counts] : counts_) {
      std::printf(" %s %d/%d", kind.c_str(), counts.first, counts.first + counts.second);
      num_failed_total += counts.second;
    }
    for (const auto& [why, count] : explained_) std::printf(" [%s: %d]", why.c_str(), count);
    std::printf("%s\n", informational_ ? "  (informational)" : num_failed_total == 0 ? "  (100%)" : "  FAILED");
    return informational_ ? 0 : num_failed_total;
  }

 private:
  std::string name_;
  bool informational_;
  std::map<std::string, std::pair<int, int>> counts_;
  std::map<std::string, int> explained_;
};

struct Pair {
  const Tokenizer* hf;    // from tokenizer.json
  const Tokenizer* gguf;  // from the GGUF metadata
  const Normalizer* nfc;  // non-null when the tokenizer.json normalizes to NFC
  // Tokens only the GGUF tokenizer calls special (llama.cpp makes them control by their
  // text or look): text and id.
  std::vector<std::pair<std::string, int32_t>> gguf_only_specials;
};

// The tokenizer.json encoding of `text` with the GGUF-only special tokens cut out first
// (leftmost, longest): what llama.cpp's control-by-text tokens should give.
std::vector<int32_t> EncodeWithGgufSpecials(const Pair& pair, const std::string& text) {
  std::vector<int32_t> ids;
  size_t start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const std::pair<std::string, int32_t>* best = nullptr;
    for (const auto& special : pair.gguf_only_specials) {
      if (text.compare(pos, special.first.size(), special.first) == 0 &&
          (best == nullptr || special.first.size() > best->first.size())) {
        best = &special;
      }
    }
    if (best == nullptr) {
      ++pos;
      continue;
    }
    std::vector<int32_t> piece = pair.hf->Encode(text.substr(start, pos - start), false);
    ids.insert(ids.end(), piece.begin(), piece.end());
    ids.push_back(best->second);
    pos += best->first.size();
    start = pos;
  }
  std::vector<int32_t> rest = pair.hf->Encode(text.substr(start), false);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

void CheckString(const Pair& pair, const std::string& text, Tally* tally) {
  const std::vector<int32_t> plain = pair.hf->Encode(text, false);
  const std::vector<int32_t> got_plain = pair.gguf->Encode(text, false);
  bool plain_ok = got_plain == plain;
  if (!plain_ok && pair.nfc != nullptr) {
    const std::string normalized = pair.nfc->Normalize(text);
    if (normalized != text && pair.gguf->Encode(normalized, false) == plain) {
      tally->Explained("no_nfc");
      plain_ok = true;
    }
  }
  if (!plain_ok && !pair.gguf_only_specials.empty()) {
    const std::vector<int32_t> with_specials = EncodeWithGgufSpecials(pair, text);
    if (got_plain == with_specials) {
      tally->Explained("control_by_text");
      plain_ok = true;
    } else if (pair.nfc != nullptr && pair.gguf->Encode(pair.nfc->Normalize(text), false) == with_specials) {
      tally->Explained("control_by_text+no_nfc");
      plain_ok = true;
    }
  }
  tally->Count("encode_plain", plain_ok, Quote(text) + " want " + IdsText(plain) + " got " + IdsText(got_plain));
  std::vector<int32_t> want = got_plain;  // the special tokens around the text
  if (pair.gguf->add_bos_token()) want.insert(want.begin(), pair.gguf->bos_token_id());
  if (pair.gguf->add_eos_token()) want.push_back(pair.gguf->eos_token_ids().front());
  const std::vector<int32_t> got = pair.gguf->Encode(text, true);
  tally->Count("encode", got == want, Quote(text) + " want " + IdsText(want) + " got " + IdsText(got));
  const std::vector<int32_t> ids = pair.hf->Encode(text, true);
  for (bool skip : {true, false}) {
    const std::string expected = pair.hf->Decode(ids, skip);
    const std::string decoded = pair.gguf->Decode(ids, skip);
    bool ok = decoded == expected;
    if (!ok && skip) {
      std::vector<int32_t> visible;  // without the tokens only the GGUF file calls special
      for (int32_t id : ids) {
        if (!pair.gguf->IsSpecial(id) || pair.hf->IsSpecial(id)) visible.push_back(id);
      }
      if (pair.hf->Decode(visible, true) == decoded) {
        tally->Explained("control_by_look");
        ok = true;
      }
    }
    if (!ok && ReplaceAll(decoded, "\xEF\xBB\xBF", "") == ReplaceAll(expected, "\xEF\xBB\xBF", "")) {
      tally->Explained("keeps_bom");
      ok = true;
    }
    if (!ok && ReplaceAll(decoded, " n't", "n't") == expected) {
      tally->Explained("llama_cpp_clean_up");
      ok = true;
    }
    tally->Count(skip ? "decode_skip" : "decode_keep", ok,
                 IdsText(ids) + " want " + Quote(expected) + " got " + Quote(decoded));
    IncrementalDecoder stream(*pair.gguf, skip);
    std::string streamed;
    for (int32_t id : ids) streamed += stream.Add(id);
    streamed += stream.Flush();
    tally->Count("stream", streamed == decoded, IdsText(ids) + " want " + Quote(decoded) + " got " + Quote(streamed));
  }
}

int CheckTokenizer(const std::string& name, const std::string& dir, const std::vector<std::string>& corpus) {
  auto hf = Tokenizer::FromDirectory(dir);
  if (!hf.ok()) {
    std::printf("%s: cannot load tokenizer.json: %s\n", name.c_str(), hf.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Normalizer> nfc;
  if (name.starts_with("qwen")) nfc = MakeUnicodeNormalizer(UnicodeForm::kNfc).value();
  int num_failed = 0;
  for (HfScores scores : {HfScores::kFromMerges, HfScores::kLlamaCppPlaceholder}) {
    HfToGgufOptions options;
    options.scores = scores;
    auto vocab = GgufVocabFromHfDirectory(dir, options);
    if (!vocab.ok()) {
      std::printf("%s: cannot convert: %s\n", name.c_str(), vocab.status().ToString().c_str());
      return num_failed + 1;
    }
    const bool spm = vocab->model == "llama";
    if (!spm && scores != HfScores::kFromMerges) break;  // scores only matter to SentencePiece
    auto gguf = Tokenizer::FromGgufVocab(*vocab, dir + " (as GGUF)");
    if (!gguf.ok()) {
      std::printf("%s: cannot build from GGUF metadata: %s\n", name.c_str(), gguf.status().ToString().c_str());
      return num_failed + 1;
    }
    const bool placeholder = scores == HfScores::kLlamaCppPlaceholder;
    Tally tally(name + " (" + vocab->model + ", pre " + vocab->pre +
                    (spm ? placeholder ? ", llama.cpp's -1000 scores" : ", scores from merges" : "") + ")",
                placeholder);
    Pair pair = {hf->get(), gguf->get(), nfc.get(), {}};
    for (int32_t id = 0; id < (*gguf)->vocab_size(); ++id) {
      auto token = (*gguf)->IdToToken(id);
      if (token && (*gguf)->IsSpecial(id) && !(*hf)->IsSpecial(id)) {
        pair.gguf_only_specials.emplace_back(std::string(*token), id);
      }
    }
    for (const std::string& text : corpus) CheckString(pair, text, &tally);
    num_failed += tally.Summarize();
  }
  return num_failed;
}

int Run(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    std::printf("%s\n", text.status().ToString().c_str());
    return 1;
  }
  const Json reference = Json::parse(*text);
  const auto corpus = reference.at("corpus").get<std::vector<std::string>>();
  std::printf("corpus: %zu strings\n", corpus.size());
  int num_failed = 0;
  for (const Json& tokenizer : reference.at("tokenizers")) {
    num_failed += CheckTokenizer(tokenizer.at("name"), tokenizer.at("dir"), corpus);
  }
  std::printf("%s\n", num_failed == 0 ? "GGUF tokenizers agree" : "MISMATCHES FOUND");
  return num_failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace surge

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gguf_tokenizer_check REFERENCE.json\n");
    return 2;
  }
  return surge::Run(argv[1]);
}
