// LineDispatcher: sends batch lines to an OpenAI-compatible server at the batch tier —
// `X-Priority: batch`, which surge route's tier admission and surge serve's priority
// scheduling both read — with at most InFlightWindow::limit() in flight, and hands each
// line's final answer back. Answers that say "full" (429, 503) and transport failures are
// retried after a back-off (429/503 without end, a transport failure up to a bound), so
// batch work waits out live load rather than failing under it.
//
// The piece any batch source reuses: the Batch API's runner (durable lines in a store),
// `surge batch run` (a file), or a queue consumer (deliveries acknowledged on done).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/periodic_thread.h"
#include "batch/batch_json.h"
#include "batch/batch_types.h"
#include "batch/in_flight_window.h"

namespace surge::net {
class HttpClient;
}  // namespace surge::net

namespace surge::batch {

struct DispatchOptions {
  std::string base_url;  // "http://127.0.0.1:8080": the line's url path is appended
  int max_in_flight = 64;
  int max_transport_attempts = 5;  // a line that never gets an HTTP answer fails after these
  int64_t request_timeout_ms = 600'000;
  int64_t max_backoff_ms = 5'000;
};

// One line, for its owner (a batch id, a queue delivery, a file).
struct DispatchedLine {
  std::string owner;
  BatchLine line;
};

// The window's cost of one answer: latency per generated token (usage.completion_tokens of
// the engine's answer, read through json_access; the whole latency when there is none, as
// for embeddings, or when it is of the wrong type or out of range).
double AnswerCostMs(const LineAnswer& answer, int64_t latency_ms);

class LineDispatcher {
 public:
  // `on_done` gets each line's final answer, once, on the HTTP client's thread, before the
  // line stops counting as outstanding; it must be quick (hand the answer off).
  using OnDone = std::function<void(const DispatchedLine& line, const LineAnswer& answer)>;
  LineDispatcher(DispatchOptions options, OnDone on_done);
  ~LineDispatcher();  // Stop()
  LineDispatcher(const LineDispatcher&) = delete;
  LineDispatcher& operator=(const LineDispatcher&) = delete;

  void Enqueue(std::vector<DispatchedLine> lines);  // thread-safe
  // Forgets `owner`'s lines not sent yet (a cancel); those in flight still end in on_done.
  void DropQueued(std::string_view owner);
  // Lines of `owner` that are queued, in flight or waiting for a retry.
  int64_t NumOutstanding(std::string_view owner) const;
  int64_t NumQueued(std::string_view owner) const;
  int window_limit() const;
  // Ends in-flight requests (no on_done for them) and joins the thread. Idempotent.
  void Stop();

 private:
  struct Pending {
    DispatchedLine line;
    int num_attempts = 0;
    std::chrono::steady_clock::time_point not_before{};
  };
  // One pass (mu_ taken inside); returns the wait until the next retry is due.
  PeriodicThread::Duration Dispatch();
  void SendLocked(Pending pending);
  void OnAnswer(Pending pending, LineAnswer answer, int64_t latency_ms);

  const DispatchOptions options_;
  const OnDone on_done_;
  std::unique_ptr<net::HttpClient> client_;
  mutable std::mutex mu_;
  std::deque<Pending> queue_;              // guarded by mu_; retries go to the front once due
  std::vector<Pending> backing_off_;       // guarded by mu_
  std::map<std::string, int64_t, std::less<>> outstanding_;  // guarded by mu_; owner -> lines
  InFlightWindow window_;                  // guarded by mu_
  int num_in_flight_ = 0;                  // guarded by mu_
  PeriodicThread thread_;                  // woken by Enqueue and every answer
};

}  // namespace surge::batch
