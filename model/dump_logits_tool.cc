// dump_logits_tool: runs a model directory on given token ids three ways and prints every
// logit as JSON, for tests/reference/test_forward_vs_reference.py:
//   "prefill":   all ids in one forward pass;
//   "decode":    a prefix in one pass, then one token per pass through the paged KV;
//   "batched_a": the same schedule as "decode", but every pass shares the batch with a
//                second sequence (--other-ids) that prefills in chunks ("batched_b");
//                batch invariance means "batched_a" must equal "decode" bit for bit.
//   "cached_b":  a third sequence that starts with the whole blocks of ids' first --prefix
//                tokens and continues with other-ids: it reuses sequence 0's cached blocks
//                (as prefix caching does) and computes only its own tail; logits of the
//                tail positions only.
// Block tables are shuffled so that neighbouring positions never sit in neighbouring blocks.
// With --decode-out=FILE it runs only the "decode" schedule and writes its logits as raw
// float32 [num ids, vocab] to FILE (for tests/reference/test_gguf_vs_llamacpp.py, whose
// 32000-token vocabularies make JSON too slow; with --prefill-chunk N its prefix is
// prefilled N tokens per pass, for tests/reference/test_long_context_vs_reference.py).
// --model may be a .gguf file.
// With --mtp (DeepSeek-V3) it prints only "mtp": the multi-token-prediction layer's logits
// for ids' positions p in [0, n - 1): rows p < n - 2 from the target's final-normed hidden
// state of p and token p + 1 (fed in two passes), row n - 2 chained -- token n - 1 with the
// hidden output of row n - 3.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/flags.h"
#include "kv/kv_storage.h"
#include "model/model.h"

namespace surge {
namespace {

struct Flags {
  std::string model;
  std::string ids;
  std::string other_ids;       // default: ids reversed
  int64_t prefix_tokens = -1;  // default: half of ids
  int64_t block_size = 4;
  int64_t chunk_tokens = 3;  // the other sequence's prefill chunk
  int64_t seed = 0;
  int64_t threads = 2;
  std::string decode_out;     // raw float32 logits of the decode schedule only
  int64_t prefill_chunk = 0;  // --decode-out: the prefix in passes of this many tokens (0: one pass)
  std::string gguf_q8 = "int8";  // what Q8_0/Q6_K tensors load as: int8, f32 or bf16
  std::string kv_dtype = "f32";
  std::string mla_mode = "absorbed";  // or "expanded"
  bool mtp = false;
};

// One forward pass: (sequence index, number of new tokens) in batch order.
using Step = std::vector<std::pair<int32_t, int32_t>>;

struct Sequence {
  std::vector<int32_t> ids = {};
  std::vector<BlockId> block_table = {};
  int32_t num_done = 0;
  std::vector<float> logits = {};  // [num_done, vocab_size]
};

std::vector<int32_t> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) ids.push_back(std::stoi(item));
  return ids;
}

// Gives each sequence ceil(len / block_size) blocks from one shuffled permutation.
int32_t AssignBlocks(std::vector<Sequence>& seqs, int32_t block_size, std::mt19937& rng) {
  int32_t num_needed = 0;
  for (const Sequence& s : seqs) num_needed += (s.ids.size() + block_size - 1) / block_size;
  std::vector<BlockId> ids(num_needed + 5);  // a few spare blocks that nobody uses
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  auto next = ids.begin();
  for (Sequence& s : seqs) {
    const int32_t n = (s.ids.size() + block_size - 1) / block_size;
    s.block_table.assign(next, next + n);
    next += n;
  }
  return static_cast<int32_t>(ids.size());
}

// Runs the steps on `kv`, collecting every row's logits per sequence.
void RunSteps(Model& model, std::vector<Sequence>& seqs, const std::vector<Step>& steps,
              KvStorage& kv) {
  const int64_t vocab = model.config().vocab_size;
  for (const Step& step : steps) {
    std::vector<int32_t> tokens, rows;
    std::vector<SequenceChunk> chunks;
    for (auto [s, n] : step) {
      Sequence& seq = seqs[s];
      chunks.push_back({static_cast<int32_t>(tokens.size()), n, seq.num_done, seq.block_table});
      for (int32_t i = 0; i < n; ++i) {
        rows.push_back(static_cast<int32_t>(tokens.size()));
        tokens.push_back(seq.ids[seq.num_done + i]);
      }
    }
    std::vector<float> logits(rows.size() * vocab);
    model.Run({tokens, chunks, rows}, kv, logits);
    auto row = logits.begin();
    for (auto [s, n] : step) {
      seqs[s].logits.insert(seqs[s].logits.end(), row, row + n * vocab);
      seqs[s].num_done += n;
      row += n * vocab;
    }
  }
}

void RunSchedule(Model& model, std::vector<Sequence>& seqs, const std::vector<Step>& steps,
                 int32_t block_size, KvDType dtype, std::mt19937& rng) {
  KvStorage kv(model.kv_layout(block_size, dtype), AssignBlocks(seqs, block_size, rng));
  RunSteps(model, seqs, steps, kv);
}

// Sequence 0 (ids) prefills; sequence 1 = ids' first whole blocks within `prefix`, then
// `other`, takes those blocks as its own and runs only the rest. Returns the rest's logits.
std::vector<float> RunCachedPrefix(Model& model, const std::vector<int32_t>& ids,
                                   const std::vector<int32_t>& other, int32_t prefix,
                                   int32_t block_size, KvDType dtype, std::mt19937& rng) {
  const int32_t shared = prefix / block_size * block_size;
  std::vector<Sequence> seqs{{ids}, {std::vector<int32_t>(ids.begin(), ids.begin() + shared)}};
  seqs[1].ids.insert(seqs[1].ids.end(), other.begin(), other.end());
  KvStorage kv(model.kv_layout(block_size, dtype), AssignBlocks(seqs, block_size, rng));
  std::copy_n(seqs[0].block_table.begin(), shared / block_size, seqs[1].block_table.begin());
  RunSteps(model, seqs, {{{0, static_cast<int32_t>(ids.size())}}}, kv);
  seqs[1].num_done = shared;
  RunSteps(model, seqs, {{{1, static_cast<int32_t>(other.size())}}}, kv);
  return seqs[1].logits;
}

void PrintMatrix(const char* name, const std::vector<float>& values, int64_t vocab, bool last) {
  std::printf("\"%s\": [", name);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % vocab == 0) std::printf("%s[", i ? "],\n" : "\n");
    std::printf("%s%.9g", i % vocab ? "," : "", values[i]);
  }
  std::printf("%s]%s\n", values.empty() ? "" : "]", last ? "" : ",");
}

// The decode schedule of sequence 0, with sequence 1 (if any) prefilling alongside in
// chunks; the order inside each pass alternates so rows move around in the batch.
std::vector<Step> DecodeSchedule(int32_t num_ids, int32_t prefix, int32_t num_other,
                                 int32_t chunk) {
  std::vector<Step> steps;
  int32_t done = 0, other_done = 0;
  while (done < num_ids || other_done < num_other) {
    Step step;
    if (done < num_ids) step.push_back({0, done == 0 ? prefix : 1});
    if (other_done < num_other) step.push_back({1, std::min(chunk, num_other - other_done)});
    if (steps.size() % 2 == 1) std::reverse(step.begin(), step.end());
    for (auto [s, n] : step) (s == 0 ? done : other_done) += n;
    steps.push_back(step);
  }
  return steps;
}

// The --mtp output (see the top of the file), through shuffled block tables.
std::vector<float> RunMtp(Model& model, const std::vector<int32_t>& ids, int32_t block_size, std::mt19937& rng) {
  const int32_t n = static_cast<int32_t>(ids.size());
  const int64_t hidden_size = model.config().hidden_size, vocab = model.config().vocab_size;
  std::vector<Sequence> seqs{{ids}};
  const int32_t num_blocks = AssignBlocks(seqs, block_size, rng);
  const std::vector<BlockId>& table = seqs[0].block_table;
  KvStorage target_kv(model.kv_layout(block_size), num_blocks);
  std::vector<int32_t> rows(n - 1);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> target_hidden(rows.size() * hidden_size);
  const std::vector<SequenceChunk> all = {{0, n - 1, 0, table}};
  model.Run({std::span<const int32_t>(ids).first(n - 1), all, {}, rows}, target_kv, {}, target_hidden);
  MtpExecutor& mtp = *model.mtp();
  KvStorage mtp_kv(mtp.kv_layout(block_size), num_blocks);
  std::vector<float> logits, pass_logits, hidden(hidden_size);
  // Real rows [begin, end): tokens ids[p + 1], hidden states of p.
  const auto run = [&](int32_t begin, int32_t end, std::span<const float> previous) {
    std::vector<int32_t> tokens(ids.begin() + begin + 1, ids.begin() + end + 1), logits_rows(end - begin);
    std::iota(logits_rows.begin(), logits_rows.end(), 0);
    const std::vector<int32_t> last = {end - begin - 1};
    const std::vector<SequenceChunk> chunk = {{0, end - begin, begin, table}};
    pass_logits.resize(logits_rows.size() * vocab);
    mtp.Run({tokens, chunk, logits_rows, last}, previous, mtp_kv, pass_logits, hidden);
    logits.insert(logits.end(), pass_logits.begin(), pass_logits.end());
  };
  const int32_t half = (n - 2) / 2;
  run(0, half, std::span<const float>(target_hidden).first(half * hidden_size));
  run(half, n - 2, std::span<const float>(target_hidden).subspan(half * hidden_size, (n - 2 - half) * hidden_size));
  const std::vector<float> chained = hidden;
  run(n - 2, n - 1, chained);
  return logits;
}

// Writes `values` as raw native-endian float32 (the test reads them with numpy).
bool WriteFloats(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  return static_cast<bool>(out);
}

int Run(const Flags& f) {
  std::vector<int32_t> ids = ParseIds(f.ids), other = ParseIds(f.other_ids);
  if (f.other_ids.empty()) other.assign(ids.rbegin(), ids.rend());
  const int32_t num_ids = static_cast<int32_t>(ids.size());
  const int32_t prefix =
      f.prefix_tokens >= 0 ? static_cast<int32_t>(f.prefix_tokens) : std::max(1, num_ids / 2);
  ThreadPool pool(static_cast<int>(f.threads));
  LoadOptions options;
  if (f.gguf_q8 != "int8" && f.gguf_q8 != "f32" && f.gguf_q8 != "bf16") {
    std::fprintf(stderr, "dump_logits_tool: --gguf-q8 must be int8, f32 or bf16\n");
    return 2;
  }
  if (f.gguf_q8 == "f32") options.gguf_wide_quant_dtype = WeightDType::kF32;
  if (f.gguf_q8 == "bf16") options.gguf_wide_quant_dtype = WeightDType::kBF16;
  StatusOr<KvDType> kv_dtype = ParseKvDType(f.kv_dtype);
  if (!kv_dtype.ok() || (f.mla_mode != "absorbed" && f.mla_mode != "expanded")) {
    std::fprintf(stderr, "dump_logits_tool: bad --kv-dtype or --mla-mode (absorbed|expanded)\n");
    return 2;
  }
  if (f.mla_mode == "expanded") options.mla_mode = LoadOptions::MlaMode::kExpanded;
  const KvDType dtype = *kv_dtype;
  options.load_mtp = f.mtp;
  auto model = Model::Load(f.model, &pool, options);
  if (!model.ok()) {
    std::fprintf(stderr, "dump_logits_tool: %s\n", model.status().ToString().c_str());
    return 1;
  }
  std::mt19937 rng(static_cast<uint32_t>(f.seed));
  const int32_t bs = static_cast<int32_t>(f.block_size);
  if (f.mtp) {
    if (num_ids < 4) {
      std::fprintf(stderr, "dump_logits_tool: --mtp needs at least 4 ids\n");
      return 2;
    }
    std::printf("{\"vocab_size\": %lld,\n", static_cast<long long>((*model)->config().vocab_size));
    PrintMatrix("mtp", RunMtp(**model, ids, bs, rng), (*model)->config().vocab_size, true);
    std::printf("}\n");
    return 0;
  }
  std::vector<Sequence> full{{ids}}, decode{{ids}}, batched{{ids}, {other}};
  if (!f.decode_out.empty()) {
    std::vector<Step> steps = DecodeSchedule(num_ids, prefix, 0, 0);
    if (f.prefill_chunk > 0) {  // the prefix pass split into chunks
      const int32_t chunk = static_cast<int32_t>(f.prefill_chunk);
      std::vector<Step> chunked;
      for (int32_t done = 0; done < prefix; done += chunk) chunked.push_back({{0, std::min(chunk, prefix - done)}});
      chunked.insert(chunked.end(), steps.begin() + 1, steps.end());
      steps = std::move(chunked);
    }
    RunSchedule(**model, decode, steps, bs, dtype, rng);
    return WriteFloats(f.decode_out, decode[0].logits) ? 0 : 1;
  }
  RunSchedule(**model, full, {{{0, num_ids}}}, bs, dtype, rng);
  RunSchedule(**model, decode, DecodeSchedule(num_ids, prefix, 0, 0), bs, dtype, rng);
  RunSchedule(**model, batched,
              DecodeSchedule(num_ids, prefix, static_cast<int32_t>(other.size()),
                             static_cast<int32_t>(f.chunk_tokens)),
              bs, dtype, rng);
  const std::vector<float> cached = RunCachedPrefix(**model, ids, other, prefix, bs, dtype, rng);
  const int64_t vocab = (*model)->config().vocab_size;
  std::printf("{\"vocab_size\": %lld,\n", static_cast<long long>(vocab));
  PrintMatrix("prefill", full[0].logits, vocab, false);
  PrintMatrix("decode", decode[0].logits, vocab, false);
  PrintMatrix("batched_a", batched[0].logits, vocab, false);
  PrintMatrix("batched_b", batched[1].logits, vocab, false);
  PrintMatrix("cached_b", cached, vocab, true);
  std::printf("}\n");
  return 0;
}

}  // namespace
}  // namespace surge

int main(int argc, char** argv) {
  surge::Flags f;
  surge::FlagParser parser("dump_logits_tool");
  parser.AddString("model", &f.model, "model directory (config.json + safetensors) or .gguf file");
  parser.AddString("ids", &f.ids, "comma-separated token ids");
  parser.AddString("other-ids", &f.other_ids,
                   "the batched second sequence (default: ids reversed)");
  parser.AddInt("prefix", &f.prefix_tokens, "tokens prefilled before decoding (default: half)");
  parser.AddInt("block-size", &f.block_size, "KV block size in tokens");
  parser.AddInt("chunk", &f.chunk_tokens, "prefill chunk of the second sequence");
  parser.AddInt("seed", &f.seed, "block-table shuffle seed");
  parser.AddInt("threads", &f.threads, "thread pool size");
  parser.AddString("decode-out", &f.decode_out,
                   "write only the decode schedule's logits, raw float32, to this file");
  parser.AddInt("prefill-chunk", &f.prefill_chunk,
                "--decode-out: prefill the prefix in passes of this many tokens (default: one pass)");
  parser.AddString("gguf-q8", &f.gguf_q8, "GGUF Q8_0/Q6_K tensors load as int8, f32 or bf16");
  parser.AddString("kv-dtype", &f.kv_dtype, "KV cache dtype: f32, bf16, f16, int8 or int4");
  parser.AddString("mla-mode", &f.mla_mode, "MLA attention: absorbed or expanded");
  parser.AddBool("mtp", &f.mtp, "print the MTP layer's logits instead (DeepSeek-V3)");
  surge::Status status = parser.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!status.ok() || f.model.empty() || f.ids.empty()) {
    std::fprintf(stderr, "%s\n%s", status.ToString().c_str(), parser.Usage().c_str());
    return 2;
  }
  return surge::Run(f);
}
