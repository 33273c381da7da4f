#include "bench/load_driver.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "bench/rng.h"
#include "bench/stream_reader.h"

namespace surge::bench {
namespace {

using Clock = std::chrono::steady_clock;
using net::SteadyTime;

constexpr auto kProgressPeriod = std::chrono::milliseconds(100);

Clock::duration SecondsToDuration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The state of one round. The driver thread (Run) owns everything but `completed_`, which
// the client's io thread fills; requests are sent from the driver thread only.
class Round {
 public:
  Round(net::HttpClient& client, const Workload& workload, const Target& target, RequestOptions options,
        const RoundPlan& plan)
      : client_(client), workload_(workload), target_(target), options_(std::move(options)), plan_(plan),
        arrival_rng_(MixSeed(plan.seed, plan.round_key, 0xA441)) {}

  RoundRun Run(const ProgressFn& progress);

 private:
  struct SessionState {
    Session session;
    size_t next_turn = 0;
    std::vector<std::string> answers;  // the replies so far, resent by later turns
    int64_t answer_tokens = 0;
  };

  bool closed_loop() const { return plan_.point.concurrency > 0; }
  int64_t cap() const { return closed_loop() ? plan_.point.concurrency : plan_.max_concurrency; }
  bool under_request_limit(int64_t extra) const {
    return plan_.num_requests <= 0 || num_sent_ + extra < plan_.num_requests;
  }
  void TakeCompleted();
  void UpdateStop(SteadyTime now);
  void Admit(SteadyTime now);
  void NewSession();
  void SendReady();
  void Send(int64_t session_index);
  void WaitForWork(SteadyTime next_progress);
  ProgressState Progress(SteadyTime now) const;

  net::HttpClient& client_;
  const Workload& workload_;
  const Target& target_;
  const RequestOptions options_;
  const RoundPlan& plan_;
  Rng arrival_rng_;
  SteadyTime start_{};
  SteadyTime next_arrival_{};

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<RequestRecord> completed_;  // guarded by mu_

  std::unordered_map<int64_t, SessionState> sessions_;
  std::deque<int64_t> ready_;  // sessions whose next turn waits for a free slot
  int64_t next_session_ = 0;
  int64_t num_sent_ = 0;
  int64_t num_in_flight_ = 0;
  int64_t num_failed_ = 0;
  bool stop_issuing_ = false;
  RoundRun run_;
};

RoundRun Round::Run(const ProgressFn& progress) {
  const double cpu_before = ProcessCpuSeconds();
  start_ = next_arrival_ = Clock::now();
  SteadyTime next_progress = start_;
  while (true) {
    TakeCompleted();
    SteadyTime now = Clock::now();
    UpdateStop(now);
    if (!stop_issuing_) {
      Admit(now);
      SendReady();
    }
    if (stop_issuing_ && num_in_flight_ == 0) break;
    if (progress && now >= next_progress) {
      progress(Progress(now));
      next_progress = now + kProgressPeriod;
    }
    WaitForWork(next_progress);
  }
  if (progress) progress(Progress(Clock::now()));
  for (const RequestRecord& record : run_.records) {
    run_.wall_s = std::max(run_.wall_s, record.send_s + record.latency_s);
  }
  run_.client_cpu_s = ProcessCpuSeconds() - cpu_before;
  return std::move(run_);
}

void Round::TakeCompleted() {
  std::vector<RequestRecord> completed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completed.swap(completed_);
  }
  for (RequestRecord& record : completed) {
    --num_in_flight_;
    if (!record.ok()) ++num_failed_;
    auto it = sessions_.find(record.session_index);
    SessionState& state = it->second;
    bool more_turns = record.ok() && state.next_turn + 1 < state.session.turns.size();
    if (more_turns && !stop_issuing_) {
      state.answers.push_back(std::move(record.output_text));
      state.answer_tokens += record.output_tokens;
      ++state.next_turn;
      ready_.push_back(record.session_index);
    } else {
      sessions_.erase(it);
    }
    record.output_text.clear();
    run_.records.push_back(std::move(record));
  }
}

void Round::UpdateStop(SteadyTime now) {
  if (stop_issuing_) return;
  bool count_reached = plan_.num_requests > 0 && num_sent_ >= plan_.num_requests;
  bool time_up = plan_.duration_s > 0 && now - start_ >= SecondsToDuration(plan_.duration_s);
  if (!count_reached && !time_up) return;
  stop_issuing_ = true;
  for (int64_t session_index : ready_) sessions_.erase(session_index);
  ready_.clear();
}

void Round::Admit(SteadyTime now) {
  auto room = [&] { return under_request_limit(static_cast<int64_t>(ready_.size())); };
  if (closed_loop()) {
    while (num_in_flight_ + static_cast<int64_t>(ready_.size()) < plan_.point.concurrency && room()) NewSession();
    return;
  }
  if (std::isinf(plan_.point.request_rate)) {
    // Everything at once: keep just enough ready to fill the cap (or the remaining count).
    int64_t want = cap() > 0 ? cap() - num_in_flight_ : plan_.num_requests - num_sent_;
    while (static_cast<int64_t>(ready_.size()) < want && room()) NewSession();
    return;
  }
  while (next_arrival_ <= now && room()) {
    NewSession();
    double gap_s = plan_.arrival == Arrival::kConstant ? 1.0 / plan_.point.request_rate
                                                       : arrival_rng_.Exponential(plan_.point.request_rate);
    next_arrival_ += SecondsToDuration(gap_s);
  }
}

void Round::NewSession() {
  int64_t index = next_session_++;
  sessions_[index].session = workload_.MakeSession(plan_.round_key, index);
  ready_.push_back(index);
}

void Round::SendReady() {
  while (!ready_.empty() && (cap() <= 0 || num_in_flight_ < cap()) && under_request_limit(0)) {
    int64_t session_index = ready_.front();
    ready_.pop_front();
    Send(session_index);
  }
}

void Round::Send(int64_t session_index) {
  SessionState& state = sessions_.at(session_index);
  const size_t turn = state.next_turn;
  BuiltRequest built = BuildRequest(options_, state.session, turn, state.answers, state.answer_tokens);
  net::ClientRequest request;
  request.method = "POST";
  request.url = target_.base_url + built.path;
  request.headers = target_.headers;
  request.headers.Set("Content-Type", "application/json");
  request.body = std::move(built.body);
  request.timeout_ms = request.read_timeout_ms = std::llround(plan_.timeout_s * 1e3);

  auto reader = std::make_shared<StreamReader>(Clock::now(), turn + 1 < state.session.turns.size());
  net::ClientCallbacks callbacks;
  callbacks.on_head = [reader](const net::HttpResponse& head) { reader->OnHead(head); };
  callbacks.on_data = [reader](std::string_view data, SteadyTime arrival) { return reader->OnData(data, arrival); };
  callbacks.on_done = [this, reader, session_index, turn, estimate = built.prompt_tokens_estimate](
                          net::ClientResult result) {
    RequestRecord record = reader->Finish(result, start_, estimate);
    record.session_index = session_index;
    record.turn = static_cast<int32_t>(turn);
    std::lock_guard<std::mutex> lock(mu_);
    completed_.push_back(std::move(record));
    // Under the lock: once it is released, Run may return and `this` go. A non-empty
    // queue was signalled already.
    if (completed_.size() == 1) wake_.notify_one();
  };
  ++num_sent_;
  ++num_in_flight_;
  client_.Send(std::move(request), std::move(callbacks));
}

void Round::WaitForWork(SteadyTime next_progress) {
  SteadyTime wake_at = next_progress;
  // The next arrival matters only while more may come (else its time stays past: a spin).
  bool arrivals_pending = !stop_issuing_ && !closed_loop() && !std::isinf(plan_.point.request_rate) &&
                          under_request_limit(static_cast<int64_t>(ready_.size()));
  if (arrivals_pending) wake_at = std::min(wake_at, next_arrival_);
  if (!stop_issuing_ && plan_.duration_s > 0) {
    wake_at = std::min(wake_at, start_ + SecondsToDuration(plan_.duration_s));
  }
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait_until(lock, wake_at, [&] { return !completed_.empty(); });
}

ProgressState Round::Progress(SteadyTime now) const {
  ProgressState state;
  state.num_done = static_cast<int64_t>(run_.records.size());
  state.num_failed = num_failed_;
  state.num_sent = num_sent_;
  state.num_in_flight = num_in_flight_;
  state.elapsed_s = std::chrono::duration<double>(now - start_).count();
  return state;
}

}  // namespace

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

RoundRun LoadDriver::Run(const Target& target, const RoundPlan& plan, const ProgressFn& progress) const {
  RequestOptions options = request_;
  options.model = target.model;
  Round round(client_, workload_, target, std::move(options), plan);
  return round.Run(progress);
}

}  // namespace surge::bench
