// EngineClient: the one header through which the server talks to the engine loop —
// submit a request, cancel it, and drain its output stream. Nothing here knows HTTP.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/sampling_params.h"

namespace surge {

class CompiledGrammar;  // engine/constraint: immutable, shared by the requests that use it

// One request, for its life in one engine; ids are never reused. A type of its own, so that
// it is never mixed up with a sequence id, a token or a count.
enum class RequestId : uint64_t {};

enum class FinishReason { kStop, kLength, kAbort };
const char* FinishReasonName(FinishReason reason);  // "stop", "length", "abort"

// Embeddings: how the final hidden states of a prompt (after the final norm) become one
// vector -- the last token's (Qwen3-Embedding and other decoder embedders), the mean
// over all tokens, or the first token's (a BERT encoder's [CLS]). The result is
// L2-normalized unless the request asks otherwise (EngineRequest::embed_normalize).
enum class PoolingKind { kLast, kMean, kCls };
const char* PoolingKindName(PoolingKind kind);  // "last", "mean", "cls"
StatusOr<PoolingKind> ParsePoolingKind(const std::string& name);

struct StopConditions {
  int32_t max_tokens = 16;                 // tokens per choice
  std::vector<std::string> stop;           // stop strings; never emitted, not even in part
  std::vector<int32_t> stop_token_ids;     // besides EOS; the token itself is not in the text
  bool ignore_eos = false;
};

struct EngineRequest {
  std::vector<int32_t> prompt_ids;
  SamplingParams sampling;
  StopConditions stop;
  int32_t n = 1;              // independent choices; they share the prompt's KV blocks
  int32_t top_logprobs = -1;  // -1: no logprobs; k >= 0: the chosen token's and k alternatives
  // -1: none; k >= 0: every prompt token after the first is scored (its logprob under the
  // model given the tokens before it, and k alternatives), for completions' echo. Such a
  // request computes its whole prompt (no prefix-cache hits), and may have max_tokens 0:
  // it then ends ("length") once its prompt is scored.
  int32_t prompt_logprobs = -1;
  bool skip_special_tokens = true;
  int32_t priority = 0;       // lower is more urgent (used by the priority policy)
  // Structured output: every choice's output is held to this grammar (token masks before
  // any sampling rule) and stops ("stop") once nothing more can follow; null: free output.
  std::shared_ptr<const CompiledGrammar> constraint;
  // >= 0: the constraint applies only after this token was generated (the reasoning
  // parser's "</think>"); the tokens up to and including it are free.
  int32_t constraint_start_token_id = -1;
  // Set: an embedding request -- prefill only, at its priority, batched with the rest;
  // nothing is sampled (n must be 1, no logprobs or constraint; sampling and stop are not
  // used) and the final output carries the pooled embedding. Its KV blocks are held only
  // while it prefills, and it bypasses the prefix cache (engine/output_processor.cc says why).
  std::optional<PoolingKind> embed;
  // The pooled vector scaled to unit length (OpenAI's embeddings are; a sentence encoder
  // without a Normalize module is not).
  bool embed_normalize = true;
  // > 0: the request's deadline, this many seconds after Submit (the engine's clock). When
  // it passes the engine ends the request at once -- its KV blocks freed, whether it waits
  // or runs -- and its stream ends with a DeadlineExceeded error. 0: no deadline.
  double timeout_s = 0;
};

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
  // The text this token added to the choice's output, before stop strings cut it: the
  // texts of a choice's tokens join into its text. A character split across tokens
  // belongs to the token that completes it (the others add ""); text still held back at
  // the end goes to the last token.
  std::string text;
  std::vector<std::pair<int32_t, float>> top;  // [top_logprobs] (token, logprob), best first
};

// What one choice produced since the previous RequestOutput.
struct ChoiceDelta {
  int32_t index = 0;
  std::vector<int32_t> token_ids;
  std::string text;  // complete UTF-8 only; text that may begin a stop string is held back
  std::vector<TokenLogprob> logprobs;           // one per token in token_ids
  std::optional<FinishReason> finish_reason;    // set once, on the choice's last delta
};

struct RequestOutput {
  std::vector<ChoiceDelta> choices;  // only the choices with news
  bool finished = false;             // every choice has finished (or the request failed)
  Status error;                      // non-OK: the request failed and will produce nothing more
  int32_t num_prompt_tokens = 0;
  int32_t num_cached_prompt_tokens = 0;  // served from the prefix cache
  int32_t num_completion_tokens = 0;     // all choices, so far
  // prompt_logprobs requests: the prompt tokens scored since the previous output, in
  // order; all of them (positions 1 .. num_prompt_tokens - 1) before any output token.
  std::vector<TokenLogprob> prompt_logprobs;
  // Seconds from Submit until the request's first chunk was scheduled; set once it was.
  std::optional<double> queue_time_s;
  // Embedding requests, on the final output: [hidden_size], L2-normalized (empty when the
  // request was cancelled or failed).
  std::vector<float> embedding;
};

// The per-request channel: the engine thread appends, the consumer drains. Thread-safe.
class RequestStream {
 public:
  virtual ~RequestStream() = default;
  virtual RequestId id() const = 0;
  // Everything produced since the last call merged into one output; nullopt when nothing
  // is new. After an output with finished == true, always nullopt.
  virtual std::optional<RequestOutput> Poll() = 0;
  // Blocks until Poll would return something (for offline callers and tests). Once the
  // final output has been taken, returns an empty output with finished set at once.
  virtual RequestOutput Wait() = 0;
};

// Per-step batch sizes (sequences or tokens) counted into fixed power-of-two buckets by
// the engine thread: a plain struct, so that observing is an index and two adds (no lock,
// no allocation) and the snapshot copies by value; the server turns it into a histogram.
struct StepSizeHistogram {
  // Upper bounds, inclusive: 1, 2, 4, ... 16384; a last bucket takes the rest (+Inf).
  static constexpr int kNumBounds = 15;
  static constexpr std::array<int64_t, kNumBounds> UpperBounds() {
    std::array<int64_t, kNumBounds> bounds{};
    for (int i = 0; i < kNumBounds; ++i) bounds[i] = int64_t{1} << i;
    return bounds;
  }
  void Observe(int64_t value);  // value >= 0

  std::array<uint64_t, kNumBounds + 1> bucket_counts{};  // not cumulative; the last is +Inf
  int64_t sum = 0;
};

// A snapshot for /metrics, published by the engine thread after every step. Counters
// (num_preemptions and below) only grow.
struct EngineStats {
  int32_t num_running = 0;  // sequences (choices) in the running batch
  int32_t num_waiting = 0;  // sequences queued, preempted ones included
  int64_t num_free_blocks = 0;
  int64_t num_total_blocks = 0;
  int64_t kv_bytes_per_block = 0;  // K and V of every layer for one block, in the KV dtype
  int64_t num_preemptions = 0;
  int64_t num_steps = 0;                   // forward passes run
  int64_t busy_us = 0;                     // wall time inside steps (forward + sampling), microseconds
  int64_t num_prompt_tokens_computed = 0;  // prefill tokens run, recomputation included
  int64_t num_generation_tokens = 0;       // tokens sampled
  StepSizeHistogram step_sequences;        // sequences in each step's batch
  StepSizeHistogram step_tokens;           // tokens computed in each step (prefill chunks + decodes)
  // Prefix caching: blocks the cache names now, and counters since start-up.
  bool prefix_caching = false;
  int64_t num_cached_blocks = 0;
  int64_t prefix_cache_queried_tokens = 0;  // tokens looked up when sequences were admitted
  int64_t prefix_cache_hit_tokens = 0;      // of those, found cached (not computed)
  int64_t prefix_cache_evicted_blocks = 0;  // cached blocks reused for new contents
  int64_t prefix_cache_expired_blocks = 0;  // cached blocks released by the TTL
  // Speculative decoding (method "none": off), counters since start-up, named as vLLM's
  // spec_decode metrics: decodes that carried a proposal, tokens proposed, of those taken,
  // and how often the draft at each position (0 = first) was taken.
  std::string spec_decode_method = "none";
  int64_t spec_decode_num_drafts = 0;
  int64_t spec_decode_num_draft_tokens = 0;
  int64_t spec_decode_num_accepted_tokens = 0;
  std::vector<int64_t> spec_decode_num_accepted_tokens_per_pos;  // [num_speculative_tokens]
  bool ready = false;
};

// --- The prefix cache seen from outside (GET /kv_config, GET /kv_events) ---

// What a router needs to compute the engine's block hashes itself (base/block_hash.h)
// and to size its view of this engine's cache.
struct KvCacheInfo {
  bool prefix_caching = false;
  int32_t block_size = 0;
  uint64_t hash_seed = 0;
  int64_t num_total_blocks = 0;
};

// A run of one kind of change, in the order the cache made them.
struct KvEvent {
  enum class Type { kStored, kEvicted, kCleared };
  Type type = Type::kStored;
  std::vector<uint64_t> block_hashes;  // empty for kCleared
};
// (On the wire -- GET /kv_events -- these are api/kv_events.h's, which names the types.)

// The changes of one engine step. Batches are numbered 1, 2, ... per engine. A snapshot is
// the whole state after batch `seq` (kCleared, then kStored of every cached block): a
// subscription starts with one, and gets one instead of the batches it had to drop.
struct KvEventBatch {
  uint64_t seq = 0;
  bool snapshot = false;
  std::vector<KvEvent> events;
};

// One subscriber's bounded buffer of batches. Thread-safe.
class KvEventSubscription {
 public:
  virtual ~KvEventSubscription() = default;
  // The batches buffered since the last call, oldest first (empty when none).
  virtual std::vector<KvEventBatch> Poll() = 0;
  // Times this subscriber fell behind and lost batches (each answered by a snapshot).
  virtual int64_t num_gaps() const = 0;
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;
  // Queues a request. `notify` is called from the engine thread whenever the stream has
  // new output; it must not block (the server posts a task to its event loop).
  // Errors: ResourceExhausted when the waiting queue is full (HTTP 429 + Retry-After);
  // InvalidArgument when the request can never run (beyond the context or the KV pool).
  virtual StatusOr<std::shared_ptr<RequestStream>> Submit(EngineRequest request,
                                                          std::function<void()> notify) = 0;
  // Stops the request and frees its KV blocks at the next step; its stream then ends
  // with finish reason kAbort. Unknown or finished ids are ignored.
  virtual void Cancel(RequestId id) = 0;
  virtual EngineStats Stats() const = 0;
  // The prefix cache's block size and hash seed; all zero for an engine without one.
  virtual KvCacheInfo KvCache() const { return {}; }
  // Streams the prefix cache's changes. `notify` is called from the engine thread when
  // the buffer gets news; it must not block. The engine never waits for a subscriber: one
  // that falls behind loses batches and gets a snapshot. Errors: Unimplemented (no prefix
  // cache), ResourceExhausted (too many subscribers).
  virtual StatusOr<std::unique_ptr<KvEventSubscription>> SubscribeKvEvents(std::function<void()> notify) {
    return UnimplementedError("this engine publishes no KV events");
  }
};

}  // namespace surge
