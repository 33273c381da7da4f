// decode_profile: where a decode step's time goes, per phase (base/phase_profile.h), at
// several batch sizes. For each batch size B it starts an engine, submits B greedy requests
// of --context prompt tokens, waits until every one has its first token (their prefills
// are done), then times the steps until the first request finishes -- steps in which all B
// sequences decode -- and prints ms per step for each phase, side by side.
//
//   build/decode_profile --model /tmp/llama110m.q8_0.gguf --batches 1,8,32,64
//
// Flags: --model PATH (directory or .gguf; default models/stories260K), --tokenizer DIR
// (only feeds the detokenizer; default models/stories260K), --batches LIST (1,8,32,64),
// --context N (256), --steps N (decode steps per request, 64), --threads N (all cores),
// --kv-dtype NAME (f32), --temperature T (0: greedy), --repeats R (3: rounds over all
// batch sizes, interleaved; each keeps its fastest round), --quantize none|int8|int4
// (as serve's: int4 with groups of 32). Otherwise loading as generate_bench's defaults:
// GGUF tensors keep their format, Q8_0 as int8.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/check.h"
#include "base/phase_profile.h"
#include "engine/engine.h"
#include "kernels/thread_pool.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace surge {
namespace {

struct Flags {
  std::string model = "models/stories260K";
  std::string tokenizer = "models/stories260K";
  std::vector<int32_t> batches = {1, 8, 32, 64};
  int32_t context = 256;
  int32_t steps = 64;
  int32_t threads = static_cast<int32_t>(std::thread::hardware_concurrency());
  std::string kv_dtype = "f32";
  float temperature = 0;
  int32_t repeats = 3;
  std::string quantize = "none";
};

std::vector<int32_t> ParseList(const std::string& text) {
  std::vector<int32_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stoi(item));
  return values;
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--help" || name == "-h") {
      std::cout << "usage: decode_profile [--model PATH] [--tokenizer DIR] [--batches 1,8,32,64]\n"
                   "  [--context 256] [--steps 64] [--threads N] [--kv-dtype f32] [--temperature 0] [--repeats 3]\n"
                   "  [--quantize none|int8|int4]\n"
                   "Prints ms per decode step for each phase (base/phase_profile.h) at each batch size.\n";
      std::exit(0);
    }
    CHECK(i + 1 < argc) << name << " needs a value";
    const std::string value = argv[++i];
    if (name == "--model") flags.model = value;
    else if (name == "--tokenizer") flags.tokenizer = value;
    else if (name == "--batches") flags.batches = ParseList(value);
    else if (name == "--context") flags.context = std::stoi(value);
    else if (name == "--steps") flags.steps = std::stoi(value);
    else if (name == "--threads") flags.threads = std::stoi(value);
    else if (name == "--kv-dtype") flags.kv_dtype = value;
    else if (name == "--temperature") flags.temperature = std::stof(value);
    else if (name == "--repeats") flags.repeats = std::stoi(value);
    else if (name == "--quantize") flags.quantize = value;
    else CHECK(false) << "unknown flag " << name << " (see --help)";
  }
  CHECK(flags.quantize == "none" || flags.quantize == "int8" || flags.quantize == "int4")
      << "--quantize must be none, int8 or int4, got " << flags.quantize;
  CHECK(flags.steps >= 2 && flags.context >= 1 && flags.repeats >= 1)
      << "--steps must be >= 2, --context and --repeats >= 1";
  return flags;
}

// What one batch size measured: phase totals over `num_steps` full-batch steps.
struct Measurement {
  PhaseTotals totals;
  int64_t num_steps = 0;
  double wall_s = 0;
};

Measurement MeasureBatch(Model& model, const Tokenizer& tokenizer, const Flags& flags, int32_t batch) {
  EngineOptions options;
  options.enable_prefix_caching = false;
  auto kv_dtype = ParseKvDType(flags.kv_dtype);
  CHECK(kv_dtype.ok()) << "--kv-dtype: " << kv_dtype.status().ToString();
  options.kv_dtype = *kv_dtype;
  options.max_num_seqs = std::max(options.max_num_seqs, batch);
  const int64_t blocks_per_seq = (flags.context + flags.steps) / options.block_size + 2;
  options.kv_cache_bytes = batch * blocks_per_seq *
                           static_cast<int64_t>(model.kv_layout(options.block_size, options.kv_dtype).bytes_per_block());
  auto engine = Engine::Create(model, tokenizer, options);
  CHECK(engine.ok()) << engine.status().ToString();
  (*engine)->Start();
  const int64_t vocab = model.config().vocab_size;
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int32_t s = 0; s < batch; ++s) {
    EngineRequest request;
    for (int32_t i = 0; i < flags.context; ++i) request.prompt_ids.push_back(static_cast<int32_t>((i * 7919 + s * 104729 + 3) % vocab));
    request.sampling.temperature = flags.temperature;
    request.sampling.seed = s;
    request.stop.max_tokens = flags.steps;
    request.stop.ignore_eos = true;
    auto stream = (*engine)->Submit(std::move(request), nullptr);
    CHECK(stream.ok()) << stream.status().ToString();
    streams.push_back(*std::move(stream));
  }
  for (int32_t s = 0; s < batch; ++s) {  // every prefill done: each has a token
    const RequestOutput output = streams[s]->Wait();
    CHECK(output.error.ok()) << output.error.ToString();
    CHECK(!output.finished || s > 0) << "the first request finished before the last prefill: raise --steps";
  }
  Measurement m;
  const PhaseTotals before = PhaseProfileSnapshot();
  const auto start = std::chrono::steady_clock::now();
  for (bool finished = false; !finished;) {
    const RequestOutput output = streams[0]->Wait();
    CHECK(output.error.ok()) << output.error.ToString();
    finished = output.finished;
  }
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.totals = PhaseTotalsSince(before, PhaseProfileSnapshot());
  m.num_steps = m.totals.calls[static_cast<int>(Phase::kForward)];
  for (auto& stream : streams) {
    for (bool finished = false; !finished;) finished = stream->Wait().finished;
  }
  (*engine)->Stop();
  return m;
}

// The phases of the table, in the order a step runs them.
constexpr Phase kForwardPhases[] = {
    Phase::kEmbed,    Phase::kNorm,     Phase::kQkv,        Phase::kRopeKvStore, Phase::kMlaQuery,
    Phase::kMlaAbsorb, Phase::kAttention, Phase::kOProj,    Phase::kResidual,    Phase::kGateUp,
    Phase::kActivation, Phase::kDown,   Phase::kMoeRoute,   Phase::kMoeExperts,  Phase::kLogits};
constexpr Phase kEnginePhases[] = {Phase::kBatchBuild, Phase::kScheduling, Phase::kSampling, Phase::kPublish};

struct Row {
  std::string name;
  std::vector<double> ms;  // per step, one per batch size
};

std::vector<Row> TableRows(const std::vector<Measurement>& measured) {
  std::vector<Row> rows;
  auto add = [&](const std::string& name, auto value_ms) {
    Row row{name, {}};
    bool any = false;
    for (const Measurement& m : measured) {
      row.ms.push_back(value_ms(m) / static_cast<double>(std::max<int64_t>(m.num_steps, 1)));
      any |= row.ms.back() > 0.0005;
    }
    if (any) rows.push_back(std::move(row));
  };
  auto ns_ms = [](const Measurement& m, Phase phase) { return m.totals.ns[static_cast<int>(phase)] * 1e-6; };
  for (Phase phase : kForwardPhases) add(std::string(PhaseName(phase)), [&](const Measurement& m) { return ns_ms(m, phase); });
  add("forward, unattributed", [&](const Measurement& m) {
    double rest = ns_ms(m, Phase::kForward);
    for (Phase phase : kForwardPhases) rest -= ns_ms(m, phase);
    return rest;
  });
  for (Phase phase : kEnginePhases) add(std::string(PhaseName(phase)), [&](const Measurement& m) { return ns_ms(m, phase); });
  add("engine loop, unattributed", [&](const Measurement& m) {
    double rest = m.wall_s * 1e3 - ns_ms(m, Phase::kForward);
    for (Phase phase : kEnginePhases) rest -= ns_ms(m, phase);
    return rest;
  });
  add("STEP (wall)", [](const Measurement& m) { return m.wall_s * 1e3; });
  return rows;
}

void PrintTable(const Flags& flags, const std::vector<Measurement>& measured) {
  std::printf("decode_profile: %s, context %d, kv %s, %d threads; ms per decode step (%% of step)\n",
              flags.model.c_str(), flags.context, flags.kv_dtype.c_str(), flags.threads);
  std::printf("| %-26s |", "phase");
  for (int32_t batch : flags.batches) std::printf(" %17s |", ("batch " + std::to_string(batch)).c_str());
  std::printf("\n|%s|", std::string(28, '-').c_str());
  for (size_t i = 0; i < flags.batches.size(); ++i) std::printf("%s|", std::string(19, '-').c_str());
  std::printf("\n");
  for (const Row& row : TableRows(measured)) {
    std::printf("| %-26s |", row.name.c_str());
    for (size_t i = 0; i < row.ms.size(); ++i) {
      const double step_ms = measured[i].wall_s * 1e3 / std::max<int64_t>(measured[i].num_steps, 1);
      std::printf(" %8.3f (%5.1f%%) |", row.ms[i], 100 * row.ms[i] / step_ms);
    }
    std::printf("\n");
  }
  std::printf("| %-26s |", "tokens/s");
  for (size_t i = 0; i < measured.size(); ++i) {
    std::printf(" %17.0f |", flags.batches[i] * measured[i].num_steps / measured[i].wall_s);
  }
  std::printf("\n| %-26s |", "steps timed");
  for (const Measurement& m : measured) std::printf(" %17lld |", static_cast<long long>(m.num_steps));
  std::printf("\n");
}

}  // namespace
}  // namespace surge

int main(int argc, char** argv) {
  using namespace surge;
  const Flags flags = ParseFlags(argc, argv);
  EnablePhaseProfile(true);
  ThreadPool pool(flags.threads);
  LoadOptions options;
  options.quantize = flags.quantize == "int8"   ? Quantization::kInt8
                     : flags.quantize == "int4" ? Quantization::kInt4
                                                : Quantization::kNone;
  auto model = Model::Load(flags.model, &pool, options);
  CHECK(model.ok()) << model.status().ToString();
  auto tokenizer = Tokenizer::FromDirectory(flags.tokenizer);
  CHECK(tokenizer.ok()) << tokenizer.status().ToString();
  // Rounds over all batch sizes, each keeping its fastest round: the machine's load
  // weighs on every batch size alike.
  std::vector<Measurement> measured(flags.batches.size());
  for (int32_t round = 0; round < flags.repeats; ++round) {
    for (size_t i = 0; i < flags.batches.size(); ++i) {
      const Measurement m = MeasureBatch(**model, **tokenizer, flags, flags.batches[i]);
      const auto per_step = [](const Measurement& x) { return x.wall_s / std::max<int64_t>(x.num_steps, 1); };
      if (round == 0 || per_step(m) < per_step(measured[i])) measured[i] = m;
    }
  }
  PrintTable(flags, measured);
  return 0;
}
