// ScriptedServer: a fake OpenAI-compatible streaming server for bench's tests. It emits
// tokens on a known schedule (TTFT, then one token every ITL) and injects faults on
// request, so that measured numbers and error counts can be checked against the script.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace surge::bench::testing {

enum class Fault {
  kNone,
  kHttp500,         // 500 with an OpenAI error body
  kMalformedSse,    // one good token, then an event whose data is not JSON
  kCloseMidStream,  // half the tokens, then the connection is cut
  kNoDone,          // every token, then the stream ends without data: [DONE]
  kStall,           // the stream starts and then nothing comes (the client's timeout)
};
// "none", "http500", "malformed", "close", "nodone", "stall".
StatusOr<Fault> ParseFault(const std::string& name);

struct StreamScript {
  int64_t ttft_ms = 0;   // request arrival to the first token
  int64_t itl_ms = 0;    // between tokens
  int64_t num_tokens = 0;  // 0: the request's max_tokens (16 when absent)
  double tokens_per_word = 2.0;  // what /tokenize and usage.prompt_tokens count
  bool has_tokenize = true;      // serve POST /tokenize (vLLM style)
  std::vector<Fault> faults{};   // the n-th generation request (by arrival) gets faults[n % size]
};

class ScriptedServer {
 public:
  explicit ScriptedServer(StreamScript script);
  ~ScriptedServer();  // Stop()
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  Status Start(uint16_t port = 0);  // 0: an ephemeral port of 127.0.0.1
  std::string url() const;          // "http://127.0.0.1:PORT"
  uint16_t port() const;
  void Stop();

  int64_t num_generation_requests() const;
  std::vector<std::string> bodies() const;  // generation request bodies, arrival order (first 10,000)

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace surge::bench::testing
