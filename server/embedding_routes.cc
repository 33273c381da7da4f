// POST /v1/embeddings: every input becomes a prefill-only engine request (pooled under
// --pooling), batched with the rest of the traffic; the answer is OpenAI's list of vectors,
// as floats or base64, truncated to `dimensions` when asked.
#include <utility>

#include "api/embedding_request.h"
#include "server/in_flight_request.h"
#include "server/routes.h"

namespace surge {
namespace {

constexpr char kEmbeddings[] = "/v1/embeddings";

// One embeddings request in flight (threads: InFlightRequest's).
class Embedding final : public InFlightRequest {
 public:
  Embedding(ServerContext& context, api::EmbeddingRequest request, Writer writer, SteadyClock::time_point arrival)
      : InFlightRequest(context, std::move(writer)), request_(std::move(request)), arrival_(arrival) {}

  // Submits one engine request per input; a refusal comes back with nothing sent, and
  // the requests already submitted are cancelled.
  Status Start(std::vector<EngineRequest> requests) {
    for (const EngineRequest& request : requests) {
      inputs_.push_back({false, static_cast<int32_t>(request.prompt_ids.size()), {}});
    }
    submitted_ = SteadyClock::now();
    return SubmitAll(std::move(requests), nullptr);
  }

 private:
  struct Input {
    bool done = false;
    int32_t num_tokens = 0;
    std::vector<float> embedding;  // [embedding_size] once done
    bool queue_time_seen = false;
  };
  void OnNews() override;
  void Finish();
  // The trace's gen_ai attributes, and its phases: queue_wait and prefill (no decode).
  void TraceOutcome(int64_t num_tokens, SteadyClock::time_point end);

  const api::EmbeddingRequest request_;
  const SteadyClock::time_point arrival_;
  SteadyClock::time_point submitted_;   // handed to the engine
  std::optional<double> queue_time_s_;  // the first input scheduled
  std::vector<Input> inputs_;  // [num inputs], as streams_
  Status error_;               // the first engine failure
};

void Embedding::OnNews() {
  bool all_done = true;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    Input& input = inputs_[i];
    if (input.done) continue;
    if (std::optional<RequestOutput> output = streams_[i]->Poll()) {
      if (!output->error.ok() && error_.ok()) error_ = output->error;
      if (output->queue_time_s && !input.queue_time_seen) {
        input.queue_time_seen = true;
        context_.metrics.ObserveQueueTime(api::PriorityTier(0), *output->queue_time_s);
        queue_time_s_ = std::min(*output->queue_time_s, queue_time_s_.value_or(*output->queue_time_s));
      }
      if (!output->embedding.empty()) input.embedding = std::move(output->embedding);
      input.done = output->finished;
    }
    all_done &= input.done;
  }
  if (all_done) Finish();
}

void Embedding::Finish() {
  finished_ = true;
  int64_t num_tokens = 0;
  std::vector<std::vector<float>> embeddings;
  bool complete = error_.ok();
  for (Input& input : inputs_) {
    num_tokens += input.num_tokens;
    complete &= !input.embedding.empty();  // empty: cancelled
    embeddings.push_back(request_.dimensions ? api::TruncateEmbedding(input.embedding, *request_.dimensions)
                                             : std::move(input.embedding));
  }
  const SteadyClock::time_point now = SteadyClock::now();
  const double e2e_s = std::chrono::duration<double>(now - arrival_).count();
  if (trace_ && trace_->sampled()) TraceOutcome(num_tokens, now);
  context_.metrics.ObserveGeneration(0, e2e_s, num_tokens, 0);  // prompt tokens; no output tokens
  Unregister();
  if (writer_->closed()) return context_.metrics.CountRequest(kEmbeddings, 499);  // the client left first
  if (!error_.ok()) return context_.ReplyError(*writer_, kEmbeddings, api::ApiError{error_, "", ""});
  if (!complete) {  // cancelled by shutdown
    return context_.ReplyError(*writer_, kEmbeddings, {UnavailableError("the server is shutting down"), "", ""});
  }
  context_.Reply(*writer_, kEmbeddings, 200,
                 api::EmbeddingResponseJson(context_.options.served_model_name, embeddings, request_.base64, num_tokens));
}

void Embedding::TraceOutcome(int64_t num_tokens, SteadyClock::time_point end) {
  trace_->Set("gen_ai.operation.name", std::string("embeddings"));
  trace_->Set("gen_ai.request.model", context_.options.served_model_name);
  trace_->Set("gen_ai.usage.input_tokens", num_tokens);
  if (queue_time_s_) trace_->Set("gen_ai.latency.time_in_queue", *queue_time_s_);
  trace_->Set("gen_ai.latency.e2e", std::chrono::duration<double>(end - arrival_).count());
  trace_->SetGenerationTimes({submitted_, queue_time_s_, std::nullopt, end});
  if (!error_.ok()) trace_->SetError(error_.message());
}

// An input past the context is a 400 with OpenAI's context_length_exceeded, as prompts are.
std::optional<api::ApiError> CheckLength(const ServerContext& context, size_t index, size_t num_tokens) {
  const int64_t max_len = context.prompts.max_model_len();
  if (num_tokens == 0) return api::InvalidParam("input", "input " + std::to_string(index) + " has no tokens");
  if (max_len <= 0 || static_cast<int64_t>(num_tokens) <= max_len) return std::nullopt;
  return api::ApiError{InvalidArgumentError("This model's maximum context length is " + std::to_string(max_len) +
                                            " tokens, and input " + std::to_string(index) + " has " +
                                            std::to_string(num_tokens) + " tokens. Shorten the input."),
                       "input", kContextLengthExceeded};
}

// One prefill-only engine request per input; text goes through the tokenizer with its
// special tokens (BOS, or the EOS a Qwen3-Embedding tokenizer appends to pool on).
api::ApiResult<std::vector<EngineRequest>> MakeEngineRequests(const ServerContext& context,
                                                              const api::EmbeddingRequest& request) {
  std::vector<EngineRequest> requests;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    api::ApiResult<std::vector<int32_t>> ids = context.prompts.FromCompletionPrompt(request.inputs[i], true);
    if (!ids.ok()) {
      api::ApiError error = ids.error();
      error.param = "input";
      return error;
    }
    const int64_t max_len = context.prompts.max_model_len();
    if (context.options.encoder && max_len >= 2 && static_cast<int64_t>(ids->size()) > max_len) {
      ids->erase(ids->begin() + (max_len - 1), ids->end() - 1);  // [CLS] ... [SEP] stays
    }
    if (auto error = CheckLength(context, i, ids->size())) return *error;
    EngineRequest engine_request;
    engine_request.prompt_ids = std::move(ids).value();
    engine_request.embed = context.options.pooling;
    engine_request.embed_normalize = context.options.embed_normalize;
    requests.push_back(std::move(engine_request));
  }
  return requests;
}

}  // namespace

void HandleEmbeddings(ServerContext& context, const net::HttpRequest& http, Writer writer,
                      SteadyClock::time_point arrival) {
  api::ApiResult<api::EmbeddingRequest> parsed = api::ParseEmbeddingRequest(http.body, context.options.request_limits);
  if (!parsed.ok()) return context.ReplyError(*writer, kEmbeddings, parsed.error());
  if (auto error = CheckModel(context, parsed->model)) return context.ReplyError(*writer, kEmbeddings, *error);
  if (context.options.embedding_size > 0) {
    if (auto error = api::CheckDimensions(*parsed, context.options.embedding_size)) {
      return context.ReplyError(*writer, kEmbeddings, *error);
    }
  }
  api::ApiResult<std::vector<EngineRequest>> requests = MakeEngineRequests(context, *parsed);
  if (!requests.ok()) return context.ReplyError(*writer, kEmbeddings, requests.error());
  if (context.draining) {
    return context.ReplyError(*writer, kEmbeddings, {UnavailableError("the server is shutting down"), "", ""});
  }
  auto embedding = std::make_shared<Embedding>(context, std::move(parsed).value(), writer, arrival);
  Status status = embedding->Start(std::move(requests).value());
  if (!status.ok()) context.ReplyError(*writer, kEmbeddings, api::ApiError{status, "", ""});
}

}  // namespace surge
