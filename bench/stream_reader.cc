#include "bench/stream_reader.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace surge::bench {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxErrorBody = 512;
constexpr size_t kMaxMessage = 160;

double Seconds(net::SteadyTime from, net::SteadyTime to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string Clip(std::string_view text) {
  std::string clipped(text.substr(0, kMaxMessage));
  for (char& c : clipped) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return clipped;
}

// "error": {"message": ...} (OpenAI, vLLM) or "error": "..." (some others).
std::string ErrorMessage(const Json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object() && error.contains("message") && error["message"].is_string()) {
    return error["message"].get<std::string>();
  }
  return error.dump();
}

// The content of the first choice: "text" (completions) or delta.content (chat; reasoning
// models stream delta.reasoning_content first). Null when the chunk carries none.
const std::string* ChunkContent(const Json& chunk) {
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return nullptr;
  const Json& choice = (*choices)[0];
  if (!choice.is_object()) return nullptr;
  if (auto text = choice.find("text"); text != choice.end() && text->is_string()) {
    return text->get_ptr<const std::string*>();
  }
  auto delta = choice.find("delta");
  if (delta == choice.end() || !delta->is_object()) return nullptr;
  for (const char* key : {"content", "reasoning_content"}) {
    auto value = delta->find(key);
    if (value != delta->end() && value->is_string() && !value->get_ptr<const std::string*>()->empty()) {
      return value->get_ptr<const std::string*>();
    }
  }
  return nullptr;
}

}  // namespace

std::string TransportErrorKind(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable: return "connect";
    case StatusCode::kDeadlineExceeded: return "timeout";
    case StatusCode::kDataLoss: return "truncated";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kInvalidArgument: return "bad_url";
    case StatusCode::kResourceExhausted: return "too_large";
    default: return "other";
  }
}

void StreamReader::OnHead(const net::HttpResponse& head) {
  http_status_ = head.status;
  event_stream_ = head.headers.Get("Content-Type").find("text/event-stream") != std::string::npos;
}

bool StreamReader::OnData(std::string_view data, net::SteadyTime arrival) {
  if (http_status_ != 200 || !event_stream_) {
    error_body_.append(data.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, error_body_.size())));
    return true;
  }
  events_.clear();
  if (Status status = parser_.Feed(data, &events_); !status.ok()) {
    Fail("malformed_sse", status.message());
    return false;
  }
  for (const net::SseEvent& event : events_) {
    if (!OnEvent(event, arrival)) return false;
  }
  return true;
}

bool StreamReader::OnEvent(const net::SseEvent& event, net::SteadyTime arrival) {
  if (done_seen_ || event.data.empty()) return true;
  if (event.data == "[DONE]") {
    done_seen_ = true;
    return true;
  }
  Json chunk = Json::parse(event.data, nullptr, /*allow_exceptions=*/false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    Fail("malformed_sse", "event data is not a JSON object: " + Clip(event.data));
    return false;
  }
  if (auto error = chunk.find("error"); error != chunk.end() && !error->is_null()) {
    Fail("stream_error", Clip(ErrorMessage(*error)));
    return false;
  }
  if (auto usage = chunk.find("usage"); usage != chunk.end() && usage->is_object()) {
    usage_prompt_tokens_ = usage->value("prompt_tokens", int64_t{-1});
    usage_completion_tokens_ = usage->value("completion_tokens", int64_t{-1});
  }
  const std::string* content = ChunkContent(chunk);
  if (content == nullptr || content->empty()) return true;
  if (num_content_chunks_++ == 0) {
    first_content_ = arrival;
  } else {
    itl_s_.push_back(Seconds(last_content_, arrival));
  }
  last_content_ = arrival;
  if (keep_text_) text_ += *content;
  return true;
}

void StreamReader::Fail(std::string kind, std::string message) {
  if (!error_kind_.empty()) return;
  error_kind_ = std::move(kind);
  error_message_ = std::move(message);
}

void StreamReader::ClassifyTransport(const net::ClientResult& result) {
  if (!result.status.ok()) {
    // Our own abort (malformed stream) surfaces as CANCELLED: the first cause stands.
    Fail(TransportErrorKind(result.status), Clip(result.status.message()));
  } else if (http_status_ != 200) {
    Json body = Json::parse(error_body_, nullptr, /*allow_exceptions=*/false);
    bool has_error = !body.is_discarded() && body.is_object() && body.contains("error");
    Fail("http_" + std::to_string(http_status_), Clip(has_error ? ErrorMessage(body["error"]) : error_body_));
  } else if (!event_stream_) {
    Fail("malformed_sse", "response is not an event stream (Content-Type: " +
                              result.response.headers.Get("Content-Type", "none") + ")");
  } else if (!done_seen_) {
    Fail("truncated", "the stream ended without data: [DONE]");
  }
}

RequestRecord StreamReader::Finish(const net::ClientResult& result, net::SteadyTime round_start,
                                   int64_t prompt_tokens_estimate) {
  ClassifyTransport(result);
  RequestRecord record;
  record.send_s = Seconds(round_start, sent_);
  net::SteadyTime end = result.timings.done > sent_ ? result.timings.done : net::SteadyTime::clock::now();
  record.latency_s = Seconds(sent_, end);
  if (num_content_chunks_ > 0) record.ttft_s = Seconds(sent_, first_content_);
  record.itl_s = std::move(itl_s_);
  record.usage_reported = usage_completion_tokens_ >= 0;
  record.output_tokens = record.usage_reported ? usage_completion_tokens_ : num_content_chunks_;
  record.prompt_tokens = usage_prompt_tokens_ >= 0 ? usage_prompt_tokens_ : prompt_tokens_estimate;
  record.error_kind = std::move(error_kind_);
  record.error_message = std::move(error_message_);
  record.output_text = std::move(text_);
  return record;
}

}  // namespace surge::bench
