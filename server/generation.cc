#include "server/generation.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "api/generation_params.h"
#include "base/phase_profile.h"
#include "base/utf8.h"
#include "server/echo.h"
#include "net/sse.h"

namespace surge {
namespace {

double SecondsBetween(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

Generation::Generation(ServerContext& context, GenerationSpec spec, std::shared_ptr<net::ResponseWriter> writer)
    : InFlightRequest(context, std::move(writer)), spec_(std::move(spec)) {}

Status Generation::Start(std::vector<EngineRequest> requests) {
  prompts_.resize(requests.size());
  if (trace_ && trace_->sampled() && !requests.empty()) TraceRequest(requests[0]);
  submitted_ = SteadyClock::now();
  if (spec_.timeout_s > 0) {
    // The deadline counts from arrival: parsing and the template already took their share.
    const double left_s = spec_.timeout_s - SecondsBetween(spec_.arrival, submitted_);
    for (EngineRequest& request : requests) request.timeout_s = std::max(left_s, 1e-6);
  }
  if (spec_.echo) {
    for (size_t i = 0; i < requests.size(); ++i) prompts_[i].prompt_ids = requests[i].prompt_ids;
  }
  return SubmitAll(std::move(requests), [this] {
    choices_.resize(prompts_.size() * spec_.n);
    if (spec_.make_tool_parser) {
      for (ChoiceState& choice : choices_) choice.tool_parser = spec_.make_tool_parser();
    }
    if (!spec_.stream) return;
    writer_->StartStream(200, net::SseHeaders());
    const std::string sse = spec_.encoder->StreamStart(static_cast<int32_t>(choices_.size()));
    if (!sse.empty()) writer_->Write(sse);
  });
}

void Generation::OnNews() {
  PhaseSpan span(Phase::kHttpStream);
  drained_ = SteadyClock::now();
  std::string sse;
  bool all_done = true;
  for (size_t i = 0; i < prompts_.size(); ++i) {
    if (prompts_[i].done) continue;
    if (std::optional<RequestOutput> output = streams_[i]->Poll()) Apply(i, *output, &sse);
    all_done &= prompts_[i].done;
  }
  if (!sse.empty() && !writer_->Write(sse)) Cancel();  // the client is gone
  if (all_done) Finish();
}

void Generation::Apply(size_t prompt_index, RequestOutput& output, std::string* sse) {
  PromptState& prompt = prompts_[prompt_index];
  if (!output.error.ok() && error_.ok()) {
    // The engine counts from submission; the client wants to hear of its own timeout.
    error_ = output.error.code() == StatusCode::kDeadlineExceeded ? TimeoutError() : output.error;
  }
  if (spec_.echo && !prompt.echoed) {
    for (TokenLogprob& score : output.prompt_logprobs) prompt.prompt_scores.push_back(std::move(score));
    // The engine scores the whole prompt before any output token.
    if (!output.choices.empty() || output.finished) Echo(prompt_index, sse);
  }
  for (ChoiceDelta& delta : output.choices) {
    ApplyDelta(static_cast<int32_t>(prompt_index) * spec_.n + delta.index, delta, sse);
  }
  prompt.totals.num_prompt_tokens = output.num_prompt_tokens;
  prompt.totals.num_cached_prompt_tokens = output.num_cached_prompt_tokens;
  prompt.totals.num_completion_tokens = output.num_completion_tokens;
  prompt.done = output.finished;
  if (output.queue_time_s && !prompt.queue_time_s) {
    prompt.queue_time_s = output.queue_time_s;
    context_.metrics.ObserveQueueTime(api::PriorityTier(spec_.priority), *output.queue_time_s);
  }
}

Status Generation::TimeoutError() const {
  std::ostringstream message;
  message << "the request's timeout of " << spec_.timeout_s << " s passed";
  return Status(StatusCode::kDeadlineExceeded, message.str());
}

void Generation::ApplyDelta(int32_t index, ChoiceDelta& delta, std::string* sse) {
  ChoiceState& choice = choices_[index];
  if (!delta.token_ids.empty()) {
    if (!first_token_) first_token_ = drained_;
    // As vLLM's: one observation per output with tokens after the choice's first.
    if (choice.last_tokens) context_.metrics.ObserveInterTokenLatency(SecondsBetween(*choice.last_tokens, drained_));
    choice.last_tokens = drained_;
  }
  api::ChoiceOutput out;
  out.index = index;
  out.text = std::move(delta.text);
  out.text_offset = choice.num_chars;
  if (spec_.logprobs) out.logprobs = ConvertLogprobs(delta.logprobs);
  if (delta.finish_reason) out.finish_reason = FinishReasonName(*delta.finish_reason);
  choice.num_chars += api::NumChars(out.text);
  if (spec_.parse_reasoning) SplitReasoningDelta(choice, delta, &out);
  if (choice.tool_parser) SplitToolCalls(choice, &out);
  if (out.finish_reason) choice.finish_reason = out.finish_reason;
  if (!spec_.stream) {
    choice.text += out.text;
    if (out.reasoning) choice.reasoning += *out.reasoning;
    for (api::ToolCallOutput& call : out.tool_calls) {
      if (call.id.empty() && !choice.tool_calls.empty()) {
        choice.tool_calls.back().arguments += call.arguments;  // a fragment of the open call
      } else {
        choice.tool_calls.push_back(std::move(call));
      }
    }
    if (out.logprobs) choice.logprobs.insert(choice.logprobs.end(), out.logprobs->begin(), out.logprobs->end());
    return;
  }
  // Tokens held back (a possible stop string, a split character) still show in logprobs.
  const bool news = !out.text.empty() || (out.reasoning && !out.reasoning->empty()) || out.finish_reason ||
                    (out.logprobs && !out.logprobs->empty()) || !out.tool_calls.empty();
  if (news) *sse += spec_.encoder->StreamDelta(out);
}

void Generation::Echo(size_t prompt_index, std::string* sse) {
  PromptState& prompt = prompts_[prompt_index];
  prompt.echoed = true;
  const EchoedPrompt echo = EchoPrompt(context_, prompt.prompt_ids, prompt.prompt_scores, spec_.logprobs);
  for (int32_t j = 0; j < spec_.n; ++j) {
    const int32_t index = static_cast<int32_t>(prompt_index) * spec_.n + j;
    ChoiceState& choice = choices_[index];
    api::ChoiceOutput out;
    out.index = index;
    out.text = echo.text;
    out.text_offset = choice.num_chars;
    if (spec_.logprobs) out.logprobs = echo.logprobs;
    choice.num_chars += api::NumChars(out.text);
    if (spec_.stream) {
      *sse += spec_.encoder->StreamDelta(out);
      continue;
    }
    choice.text += out.text;
    if (out.logprobs) choice.logprobs.insert(choice.logprobs.end(), out.logprobs->begin(), out.logprobs->end());
  }
}

void Generation::SplitToolCalls(ChoiceState& choice, api::ChoiceOutput* out) const {
  ToolCallDelta parts = choice.tool_parser->Add(out->text);
  if (out->finish_reason) parts.Append(choice.tool_parser->Finish());
  out->text = std::move(parts.content);
  for (ToolCall& call : parts.calls) {
    // parallel_tool_calls false: the first call only; later ones are dropped, text and all.
    if (!spec_.parallel_tool_calls && call.index > 0) continue;
    out->tool_calls.push_back({call.index, std::move(call.id), std::move(call.name), std::move(call.arguments)});
  }
  for (const api::ToolCallOutput& call : out->tool_calls) choice.num_tool_calls += !call.id.empty();
  // As OpenAI: a choice that ended on its own (not cut by max_tokens) after calling tools
  // finishes with "tool_calls".
  if (out->finish_reason == "stop" && choice.num_tool_calls > 0) out->finish_reason = "tool_calls";
}

void Generation::SplitReasoningDelta(ChoiceState& choice, const ChoiceDelta& delta, api::ChoiceOutput* out) const {
  ReasoningDelta parts = choice.reasoning_parser.Add(out->text);
  if (delta.finish_reason) {
    ReasoningDelta rest = choice.reasoning_parser.Finish();
    parts.reasoning += rest.reasoning;
    parts.content += rest.content;
  }
  out->text = std::move(parts.content);
  out->reasoning = std::move(parts.reasoning);
  for (int32_t token : delta.token_ids) {
    if (choice.thinking_closed) break;
    choice.thinking_closed = token == spec_.think_end_token_id;
    choice.num_reasoning_tokens += !choice.thinking_closed;
  }
}

// A chosen token shows the text it added; an alternative, which added nothing, shows its
// bytes (a special token: its name, even where the output skips it).
std::vector<api::TokenLogprobInfo> Generation::ConvertLogprobs(const std::vector<TokenLogprob>& logprobs) const {
  auto bytes = [&](int32_t id) { return context_.TokenBytes(id); };
  std::vector<api::TokenLogprobInfo> converted;
  converted.reserve(logprobs.size());
  for (const TokenLogprob& logprob : logprobs) {
    api::TokenLogprobInfo info{logprob.text, logprob.logprob, bytes(logprob.token), {}};
    for (const auto& [token, value] : logprob.top) {
      std::string token_bytes = bytes(token);
      info.top.push_back({Utf8Lossy(token_bytes), value, std::move(token_bytes)});
    }
    converted.push_back(std::move(info));
  }
  return converted;
}

api::Usage Generation::TotalUsage() const {
  api::Usage usage;
  for (const PromptState& prompt : prompts_) {
    usage.prompt_tokens += prompt.totals.num_prompt_tokens;
    usage.cached_tokens += prompt.totals.num_cached_prompt_tokens;
    usage.completion_tokens += prompt.totals.num_completion_tokens;
  }
  if (spec_.parse_reasoning && spec_.think_end_token_id) {
    usage.reasoning_tokens = 0;
    for (const ChoiceState& choice : choices_) *usage.reasoning_tokens += choice.num_reasoning_tokens;
  }
  return usage;
}

// OpenTelemetry's gen_ai conventions (as vLLM sets them), plus surge's own for the
// prefix cache and the tier.
void Generation::TraceRequest(const EngineRequest& first) {
  trace_->Set("gen_ai.operation.name", std::string(spec_.endpoint == "/v1/completions" ? "text_completion" : "chat"));
  trace_->Set("gen_ai.request.model", context_.options.served_model_name);
  trace_->Set("gen_ai.request.max_tokens", int64_t{first.stop.max_tokens});
  trace_->Set("gen_ai.request.temperature", static_cast<double>(first.sampling.temperature));
  trace_->Set("gen_ai.request.top_p", static_cast<double>(first.sampling.top_p));
  trace_->Set("gen_ai.request.n", int64_t{spec_.n});
  trace_->Set("surge.priority_tier", std::string(api::PriorityTier(spec_.priority)));
}

std::optional<double> Generation::QueueTime() const {
  std::optional<double> queue_time_s;  // the first prompt scheduled starts the work
  for (const PromptState& prompt : prompts_) {
    if (prompt.queue_time_s) queue_time_s = std::min(*prompt.queue_time_s, queue_time_s.value_or(*prompt.queue_time_s));
  }
  return queue_time_s;
}

void Generation::TraceOutcome(const api::Usage& usage, SteadyClock::time_point end) {
  const std::optional<double> queue_time_s = QueueTime();
  std::vector<std::string> finish_reasons;
  for (const ChoiceState& choice : choices_) finish_reasons.push_back(choice.finish_reason.value_or(""));
  trace_->Set("gen_ai.response.model", context_.options.served_model_name);
  trace_->Set("gen_ai.usage.input_tokens", int64_t{usage.prompt_tokens});
  trace_->Set("gen_ai.usage.output_tokens", int64_t{usage.completion_tokens});
  trace_->Set("gen_ai.response.finish_reasons", std::move(finish_reasons));
  trace_->Set("surge.prefix_cache.hit_tokens", int64_t{usage.cached_tokens});
  if (queue_time_s) trace_->Set("gen_ai.latency.time_in_queue", *queue_time_s);
  if (first_token_) trace_->Set("gen_ai.latency.time_to_first_token", SecondsBetween(spec_.arrival, *first_token_));
  trace_->Set("gen_ai.latency.e2e", SecondsBetween(spec_.arrival, end));
  trace_->SetGenerationTimes({submitted_, queue_time_s, first_token_, end});
  if (!error_.ok()) trace_->SetError(error_.message());
}

void Generation::Finish() {
  finished_ = true;
  const api::Usage usage = TotalUsage();
  const SteadyClock::time_point now = SteadyClock::now();
  if (trace_ && trace_->sampled()) TraceOutcome(usage, now);
  if (error_.code() == StatusCode::kDeadlineExceeded) context_.metrics.CountTimeout();
  context_.metrics.ObserveGeneration(SecondsBetween(spec_.arrival, first_token_.value_or(now)),
                                     SecondsBetween(spec_.arrival, now), usage.prompt_tokens,
                                     usage.completion_tokens, api::PriorityTier(spec_.priority), QueueTime().value_or(-1));
  context_.metrics.CountFinished(!error_.ok() || choices_.empty() ? "" : choices_.front().finish_reason.value_or(""));
  // Bookkeeping before the last bytes: a client that has seen the end of its answer then
  // finds it in /metrics. (Shutdown still waits for those bytes: the connection stays
  // open until the response ends.)
  Unregister();
  if (spec_.stream) {
    FinishStream(usage);
  } else {
    FinishWhole(usage);
  }
}

void Generation::FinishStream(const api::Usage& usage) {
  // Counted at the end, not at the head: a stream the client left (its writer closed
  // before End) is a 499, as a whole response would be, never a 200.
  context_.metrics.CountRequest(spec_.endpoint, writer_->closed() ? 499 : 200);
  if (!error_.ok() && !writer_->closed()) {
    context_.metrics.CountError(ErrorKindForStatus(api::HttpStatusFor(error_.code())));
  }
  const std::optional<std::string> finish_reason = choices_.empty() ? std::nullopt : choices_.back().finish_reason;
  writer_->Write(spec_.encoder->StreamEnd(usage, finish_reason, error_));
  writer_->End();
}

void Generation::FinishWhole(const api::Usage& usage) {
  if (writer_->closed()) {
    context_.metrics.CountRequest(spec_.endpoint, 499);  // the client left first
    return;
  }
  if (!error_.ok()) return context_.ReplyError(*writer_, spec_.endpoint, api::ApiError{error_, "", ""});
  std::vector<api::ChoiceOutput> choices;
  for (size_t i = 0; i < choices_.size(); ++i) {
    ChoiceState& state = choices_[i];
    api::ChoiceOutput out;
    out.index = static_cast<int32_t>(i);
    out.text = std::move(state.text);
    out.finish_reason = state.finish_reason;
    if (spec_.logprobs) out.logprobs = std::move(state.logprobs);
    if (spec_.parse_reasoning) out.reasoning = std::move(state.reasoning);
    out.tool_calls = std::move(state.tool_calls);
    choices.push_back(std::move(out));
  }
  context_.Reply(*writer_, spec_.endpoint, 200, spec_.encoder->Whole(choices, usage));
}

}  // namespace surge
