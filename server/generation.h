// Generation: one /v1/completions or /v1/chat/completions request in flight — its engine
// requests (one per prompt), and the HTTP response they feed, streamed as SSE chunks or
// sent whole at the end.
//
// Threads: the engine thread only calls Notify, which posts a Drain to the worker pool
// (coalesced: one pending drain at a time); Drain turns engine output into JSON and hands
// it to the thread-safe ResponseWriter. The io thread only calls Cancel (client gone).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/response_common.h"
#include "engine/engine_client.h"
#include "net/response_writer.h"
#include "server/in_flight_request.h"
#include "server/reasoning_parser.h"
#include "server/response_encoder.h"
#include "server/server_context.h"
#include "server/tool_call_parser.h"

namespace surge {

using SteadyClock = std::chrono::steady_clock;

struct GenerationSpec {
  std::string endpoint;  // "/v1/completions" (for metrics)
  bool stream = false;
  int32_t n = 1;           // choices per prompt
  bool logprobs = false;
  bool echo = false;  // completions: each choice's text starts with its prompt (server/echo.h)
  // The protocol's writer (completions, chat, responses); the generation's alone.
  std::shared_ptr<ResponseEncoder> encoder;
  SteadyClock::time_point arrival;
  // > 0: the request's deadline, seconds after `arrival` (its `timeout` or the server's
  // --request-timeout); each engine request gets what is left of it at submission.
  double timeout_s = 0;
  int32_t priority = 0;  // for the per-tier metrics
  // Chat under --reasoning-parser: each choice's text is split into reasoning_content and
  // content; with the id of "</think>" (when it is one token) reasoning tokens are counted.
  bool parse_reasoning = false;
  std::optional<int32_t> think_end_token_id;
  // Chat with tools, tool_choice auto under --tool-call-parser or tool_choice required /
  // named: each choice's answer (after any reasoning) is parsed for tool calls by a parser
  // of its own from this; false parallel_tool_calls keeps only the first call of each
  // choice.
  std::function<std::unique_ptr<ToolCallParser>()> make_tool_parser;
  bool parallel_tool_calls = true;
};

class Generation final : public InFlightRequest {
 public:
  Generation(ServerContext& context, GenerationSpec spec, std::shared_ptr<net::ResponseWriter> writer);

  // Submits one engine request per prompt (choice i * n + j is prompt i's j-th) and starts
  // the response. A refusal (429, 400) comes back with nothing sent; requests already
  // submitted for earlier prompts are cancelled.
  Status Start(std::vector<EngineRequest> requests);

 private:
  struct ChoiceState {
    std::string text;                              // whole responses only
    std::vector<api::TokenLogprobInfo> logprobs;   // whole responses only
    int64_t num_chars = 0;                         // text so far, for completions' text_offset
    std::optional<std::string> finish_reason;
    ReasoningParser reasoning_parser;  // spec.parse_reasoning only
    std::string reasoning;             // whole responses only
    int64_t num_reasoning_tokens = 0;  // tokens before "</think>"
    bool thinking_closed = false;      // "</think>" was sampled
    std::unique_ptr<ToolCallParser> tool_parser;  // from spec.make_tool_parser, if set
    std::vector<api::ToolCallOutput> tool_calls;  // whole responses only
    size_t num_tool_calls = 0;
    std::optional<SteadyClock::time_point> last_tokens;  // when its latest tokens were drained
  };
  struct PromptState {
    bool done = false;
    std::optional<double> queue_time_s;  // the engine's, once it scheduled the prompt
    RequestOutput totals;  // the latest counts (prompt, cached, completion tokens)
    // spec.echo only: the prompt, its scores so far, and whether the echo went out.
    std::vector<int32_t> prompt_ids;
    std::vector<TokenLogprob> prompt_scores;
    bool echoed = false;
  };

  void OnNews() override;
  void Apply(size_t prompt_index, RequestOutput& output, std::string* sse);
  Status TimeoutError() const;  // spec_.timeout_s passed
  void ApplyDelta(int32_t index, ChoiceDelta& delta, std::string* sse);
  // spec.echo: the prompt's echo (and scores) into each of its choices, before their output.
  void Echo(size_t prompt_index, std::string* sse);
  // Moves the thinking part of out->text into out->reasoning.
  void SplitReasoningDelta(ChoiceState& choice, const ChoiceDelta& delta, api::ChoiceOutput* out) const;
  // Moves the tool calls in out->text into out->tool_calls.
  void SplitToolCalls(ChoiceState& choice, api::ChoiceOutput* out) const;
  std::vector<api::TokenLogprobInfo> ConvertLogprobs(const std::vector<TokenLogprob>& logprobs) const;
  void Finish();
  void FinishStream(const api::Usage& usage);
  void FinishWhole(const api::Usage& usage);
  api::Usage TotalUsage() const;
  // The trace's attributes of the request (at Start) and of its outcome (at Finish).
  void TraceRequest(const EngineRequest& first);
  void TraceOutcome(const api::Usage& usage, SteadyClock::time_point end);
  // Seconds until the engine first scheduled any of the prompts; nullopt before.
  std::optional<double> QueueTime() const;

  const GenerationSpec spec_;
  std::vector<PromptState> prompts_;
  std::vector<ChoiceState> choices_;  // [num_prompts * n]
  Status error_;                      // the first engine failure
  std::optional<SteadyClock::time_point> first_token_;
  SteadyClock::time_point drained_;  // when the current OnNews began: the tokens' arrival
  SteadyClock::time_point submitted_;  // handed to the engine (the queue_wait span's start)
};

}  // namespace surge
