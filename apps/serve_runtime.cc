#include "apps/serve_runtime.h"

#include <algorithm>
#include <filesystem>

#include "apps/byte_size.h"
#include "apps/load_progress.h"
#include "base/logging.h"
#include "gguf/gguf_file.h"
#include "model/gguf_weights.h"
#include "tokenizer/gguf_vocab_io.h"

namespace surge {
namespace {

// Bytes for the KV cache: the configured amount, a fraction of free memory, or by
// default enough for every sequence at full context, capped at a fraction of free memory.
int64_t KvCacheBytes(const ServeConfig& config, const ModelExecutor& model) {
  if (config.engine.kv_cache_bytes > 0) return config.engine.kv_cache_bytes;
  const int64_t available = AvailableMemoryBytes();
  if (config.kv_cache_fraction > 0) return static_cast<int64_t>(config.kv_cache_fraction * available);
  const int64_t bytes_per_block = static_cast<int64_t>(model.kv_layout(config.engine.block_size, config.engine.kv_dtype).bytes_per_block());
  const int64_t blocks_per_seq = (config.server.max_model_len + config.engine.block_size - 1) / config.engine.block_size;
  const int64_t wanted = bytes_per_block * blocks_per_seq * config.engine.max_num_seqs;
  if (available <= 0) return wanted;
  return std::max(bytes_per_block, std::min(wanted, static_cast<int64_t>(kDefaultKvCacheFraction * available)));
}

// Absolute: sgl-router loads a tokenizer from /server_info's model_path, and takes a path it
// cannot find (a relative one, from its own working directory) for a Hugging Face id to fetch.
std::string AbsolutePath(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

}  // namespace

std::string ModelNameFromDirectory(const std::string& dir) {
  std::filesystem::path path(dir);
  while (!path.empty() && !path.has_filename()) path = path.parent_path();  // trailing '/'
  const std::string name = path.filename().string();
  return name.empty() || name == "." ? "model" : name;
}

StatusOr<std::string> ModelOrDefault(const std::string& model) {
  if (!model.empty()) return model;
  std::error_code error;
  if (!std::filesystem::is_regular_file(kDefaultModelPath, error)) {
    return NotFoundError(std::string("the default model ") + kDefaultModelPath +
                         " is not installed: run `bash scripts/setup.sh` (or `make setup`) from the repository root, "
                         "or name a model (e.g. models/stories260K)");
  }
  return std::string(kDefaultModelPath);
}

StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFor(const std::string& model,
                                                      const std::string& tokenizer_dir) {
  if (!tokenizer_dir.empty()) return Tokenizer::FromDirectory(tokenizer_dir);
  if (IsGgufPath(model)) {
    ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(model));
    return TokenizerFromGguf(*file);
  }
  return Tokenizer::FromDirectory(model);
}

ServeRuntime::ServeRuntime(ServeConfig config) : config_(std::move(config)) {}

ServeRuntime::~ServeRuntime() { Shutdown(std::chrono::milliseconds(0)); }

StatusOr<std::unique_ptr<ServeRuntime>> ServeRuntime::Start(ServeConfig config) {
  std::unique_ptr<ServeRuntime> runtime(new ServeRuntime(std::move(config)));
  RETURN_IF_ERROR(runtime->Load());
  runtime->engine_->Start();
  RETURN_IF_ERROR(runtime->server_->Start());
  if (runtime->batch_) {
    runtime->batch_->StartRunner(batch::LoopbackBaseUrl(runtime->config_.server.host, runtime->server_->port()));
  }
  return runtime;
}

Status ServeRuntime::CheckContextLength() {
  ServerOptions& server = config_.server;
  const int64_t model_len = executor_->config().max_position_embeddings;
  if (server.max_model_len <= 0) server.max_model_len = model_len;
  if (server.max_model_len > model_len) {
    return InvalidArgumentError("--max-model-len " + std::to_string(server.max_model_len) +
                                " is longer than the model's context (max_position_embeddings " +
                                std::to_string(model_len) + ")");
  }
  return OkStatus();
}

Status ServeRuntime::LoadEncoder() {
  if (config_.speculative.method != SpeculativeMethod::kNone) {
    return InvalidArgumentError("--speculative: " + config_.model_dir + " is a sentence encoder; it generates nothing");
  }
  ASSIGN_OR_RETURN(encoder_, BertModel::Load(config_.model_dir, pool_.get(), config_.load));
  executor_ = encoder_.get();
  const BertConfig& bert = encoder_->bert_config();
  ServerOptions& server = config_.server;
  server.encoder = true;
  server.embed_normalize = bert.normalize;
  if (!config_.pooling_given) server.pooling = bert.pooling == EncoderPooling::kCls ? PoolingKind::kCls : PoolingKind::kMean;
  if (server.max_model_len <= 0) server.max_model_len = bert.max_seq_length;
  if (server.max_model_len > bert.model.max_position_embeddings) {
    return InvalidArgumentError("--max-model-len: an encoder takes at most max_position_embeddings (" +
                                std::to_string(bert.model.max_position_embeddings) + ") tokens");
  }
  return OkStatus();
}

void ServeRuntime::FillWorkerInfo() {
  WorkerInfo& info = config_.server.worker_info;
  info.model_path = AbsolutePath(config_.model_dir);
  info.tokenizer_path = AbsolutePath(config_.tokenizer_dir.empty() ? config_.model_dir : config_.tokenizer_dir);
  info.model_type = executor_->config().model_type;
  info.weight_dtype = executor_->linear_weight_formats();
  info.kv_cache_dtype = KvDTypeName(config_.engine.kv_dtype);
  info.max_num_seqs = config_.engine.max_num_seqs;
  info.max_num_batched_tokens = config_.engine.max_num_batched_tokens;
  info.block_size = config_.engine.block_size;
  info.max_total_tokens = int64_t{engine_->num_kv_blocks()} * config_.engine.block_size;
}

Status ServeRuntime::LoadModel() {
  if (IsBertDirectory(config_.model_dir)) return LoadEncoder();
  ASSIGN_OR_RETURN(model_, Model::Load(config_.model_dir, pool_.get(), config_.load));
  executor_ = model_.get();
  return OkStatus();
}

Status ServeRuntime::Load() {
  LoadProgress progress(config_.show_progress ? stderr : nullptr, config_.model_dir, 3);
  progress.Stage("weights");
  pool_ = std::make_unique<ThreadPool>(config_.threads);
  RETURN_IF_ERROR(LoadModel());
  LOG(INFO) << "model " << config_.model_dir << ": weights " << executor_->linear_weight_formats() << ", "
            << executor_->linear_weight_bytes() / (1 << 20) << " MiB of linear layers";
  progress.Stage("tokenizer");
  ASSIGN_OR_RETURN(tokenizer_, LoadTokenizerFor(config_.model_dir, config_.tokenizer_dir));
  ServerOptions& server = config_.server;
  if (server.served_model_name.empty()) server.served_model_name = ModelNameFromDirectory(config_.model_dir);
  RETURN_IF_ERROR(CheckContextLength());
  server.embedding_size = executor_->config().hidden_size;
  server.tool_call_parser = config_.tool_call_parser.value_or(DefaultToolCallParser(executor_->config().model_type));
  LOG(INFO) << "tool call parser: " << ToolCallParserName(server.tool_call_parser);
  if (config_.require_tool_call_parser && server.tool_call_parser == ToolCallParserKind::kNone) {
    return InvalidArgumentError("--enable-auto-tool-choice: model_type '" + executor_->config().model_type +
                                "' has no default tool call parser; name one with --tool-call-parser");
  }
  progress.Stage("KV cache and engine");
  config_.engine.kv_cache_bytes = KvCacheBytes(config_, *executor_);
  if (model_) {
    ASSIGN_OR_RETURN(speculation_, StartSpeculation(config_.speculative, config_.model_dir, config_.load, *model_,
                                                    pool_.get(), &config_.engine));
  }
  ASSIGN_OR_RETURN(engine_, Engine::Create(*executor_, *tokenizer_, config_.engine));
  FillWorkerInfo();
  ASSIGN_OR_RETURN(server_, OpenAiServer::Create(*engine_, *tokenizer_, server));
  progress.Done();
  return MountBatchApi();
}

Status ServeRuntime::MountBatchApi() {
  OpenAiServer* http = server_.get();
  const batch::AddRoute add = [http](std::string method, std::string path, net::Handler handler, size_t max_body_bytes) {
    http->AddRoute(std::move(method), std::move(path), std::move(handler), max_body_bytes);
  };
  if (!config_.batch) {
    batch::MountBatchApiOff(add, "start surge serve with --data-dir DIR");
    return OkStatus();
  }
  config_.batch->metrics = &server_->metrics_registry();
  ASSIGN_OR_RETURN(batch_, batch::BatchService::Open(*config_.batch));
  batch_->Mount(add);
  return OkStatus();
}

void ServeRuntime::Shutdown(std::chrono::milliseconds drain_timeout) {
  if (batch_) batch_->Stop();
  if (server_) server_->Shutdown(drain_timeout);
  if (engine_) engine_->Stop();
}

}  // namespace surge
