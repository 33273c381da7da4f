// The answers the ecosystem's routers ask of a worker (sgl-router, vllm-router, the llm-d
// endpoint picker) and vLLM's small endpoints: /ping, /version, /get_load, /server_info
// (/get_server_info), /model_info (/get_model_info). Cheap: they run on the io thread.
#include "api/response_common.h"
#include "base/version.h"
#include "server/routes.h"

namespace surge {

// vLLM's /ping (SageMaker's health probe): /health's answer.
void HandlePing(ServerContext& context, Writer writer) { HandleHealth(context, std::move(writer)); }

void HandleVersion(ServerContext& context, Writer writer) {
  context.Reply(*writer, "/version", 200, api::Dump(api::Json{{"version", kSurgeVersion}}));
}

// The routers' power-of-two and load monitors read it: sgl-router 0.3 wants SGLang's list of
// per-data-parallel-rank loads and sums their num_tokens (an object reads as -1 there);
// vllm-router 0.1 wants one object and reads its `load` (a list reads as 0). Measured against
// both (docs/GATEWAYS.md); --get-load-format picks.
void HandleGetLoad(ServerContext& context, Writer writer) {
  const EngineStats stats = context.engine.Stats();
  const int64_t used_blocks = stats.num_total_blocks - stats.num_free_blocks;
  const WorkerInfo& info = context.options.worker_info;
  api::Json load = {{"dp_rank", 0},
                    {"load", stats.num_running + stats.num_waiting},
                    {"num_reqs", stats.num_running},
                    {"num_waiting_reqs", stats.num_waiting},
                    {"num_tokens", used_blocks * info.block_size},
                    {"kv_cache_usage", stats.num_total_blocks > 0 ? static_cast<double>(used_blocks) / stats.num_total_blocks : 0.0}};
  if (!info.get_load_as_object) load = api::Json::array({std::move(load)});
  context.Reply(*writer, "/get_load", 200, api::Dump(load));
}

// SGLang's server_args names, the ones sgl-router's worker discovery reads.
void HandleServerInfo(ServerContext& context, Writer writer) {
  const WorkerInfo& info = context.options.worker_info;
  api::Json body = {{"model_id", context.options.served_model_name},
                    {"served_model_name", context.options.served_model_name},
                    {"model_path", info.model_path},
                    {"tokenizer_path", info.tokenizer_path},
                    {"version", kSurgeVersion},
                    {"dp_size", 1},
                    {"tp_size", 1},
                    {"max_batch_size", info.max_num_seqs},
                    {"max_running_requests", info.max_num_seqs},
                    {"max_prefill_tokens", info.max_num_batched_tokens},
                    {"max_total_num_tokens", info.max_total_tokens},
                    {"max_total_tokens", info.max_total_tokens},
                    {"context_length", context.prompts.max_model_len()},
                    {"max_model_len", context.prompts.max_model_len()},
                    {"page_size", info.block_size},
                    {"kv_cache_dtype", info.kv_cache_dtype},
                    {"dtype", info.weight_dtype}};
  context.Reply(*writer, "/server_info", 200, api::Dump(body));
}

void HandleModelInfo(ServerContext& context, Writer writer) {
  const WorkerInfo& info = context.options.worker_info;
  api::Json architectures = api::Json::array();
  api::Json body = {{"model_path", info.model_path},
                    {"tokenizer_path", info.tokenizer_path},
                    {"served_model_name", context.options.served_model_name},
                    {"is_generation", true},
                    {"model_type", info.model_type},
                    {"architectures", architectures},
                    {"preferred_sampling_params", nullptr},
                    {"weight_version", "default"},
                    {"has_image_understanding", false},
                    {"has_audio_understanding", false},
                    {"max_model_len", context.prompts.max_model_len()}};
  context.Reply(*writer, "/model_info", 200, api::Dump(body));
}

}  // namespace surge
