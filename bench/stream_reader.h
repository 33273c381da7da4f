// StreamReader: follows one streamed OpenAI response as its bytes arrive — SSE events,
// content chunks and their arrival times, the usage block, [DONE] — and classifies how
// the exchange ended. Runs on the client's io thread; no locks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/request_record.h"
#include "net/http_client.h"
#include "net/sse.h"

namespace surge::bench {

class StreamReader {
 public:
  // `sent`: when the request was handed to the client; timings are measured from it.
  StreamReader(net::SteadyTime sent, bool keep_text) : sent_(sent), keep_text_(keep_text) {}

  void OnHead(const net::HttpResponse& head);
  // False stops the exchange: the stream is malformed and nothing after it can be trusted.
  bool OnData(std::string_view data, net::SteadyTime arrival);
  // The record of the finished exchange. `round_start` anchors send_s; the estimate is
  // used when the server reports no usage.
  RequestRecord Finish(const net::ClientResult& result, net::SteadyTime round_start,
                       int64_t prompt_tokens_estimate);

 private:
  bool OnEvent(const net::SseEvent& event, net::SteadyTime arrival);
  void Fail(std::string kind, std::string message);
  void ClassifyTransport(const net::ClientResult& result);

  const net::SteadyTime sent_;
  const bool keep_text_;
  net::SseParser parser_;
  std::vector<net::SseEvent> events_;  // scratch, reused across reads
  int http_status_ = 0;
  bool event_stream_ = false;
  std::string error_body_;  // the first bytes of a non-stream answer
  bool done_seen_ = false;
  int64_t num_content_chunks_ = 0;
  net::SteadyTime first_content_{};
  net::SteadyTime last_content_{};
  std::vector<double> itl_s_;
  std::string text_;
  int64_t usage_prompt_tokens_ = -1;
  int64_t usage_completion_tokens_ = -1;
  std::string error_kind_;
  std::string error_message_;
};

// "connect", "timeout", "truncated", ... for a transport failure Status of HttpClient.
std::string TransportErrorKind(const Status& status);

}  // namespace surge::bench
