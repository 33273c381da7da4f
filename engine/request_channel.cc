#include "engine/request_channel.h"

#include <utility>

namespace surge {
namespace {

void AppendDelta(ChoiceDelta& into, ChoiceDelta& from) {
  into.token_ids.insert(into.token_ids.end(), from.token_ids.begin(), from.token_ids.end());
  into.text += from.text;
  for (TokenLogprob& logprob : from.logprobs) into.logprobs.push_back(std::move(logprob));
  if (from.finish_reason) into.finish_reason = from.finish_reason;
}

// Later outputs extend earlier ones: deltas of the same choice concatenate, the counts
// and the finished flag are the latest, the first error sticks.
void Merge(RequestOutput& into, RequestOutput& from) {
  for (ChoiceDelta& delta : from.choices) {
    ChoiceDelta* same = nullptr;
    for (ChoiceDelta& existing : into.choices) {
      if (existing.index == delta.index) same = &existing;
    }
    if (same != nullptr) {
      AppendDelta(*same, delta);
    } else {
      into.choices.push_back(std::move(delta));
    }
  }
  into.finished = into.finished || from.finished;
  if (into.error.ok()) into.error = from.error;
  into.num_prompt_tokens = from.num_prompt_tokens;
  into.num_cached_prompt_tokens = from.num_cached_prompt_tokens;
  into.num_completion_tokens = from.num_completion_tokens;
  if (from.queue_time_s) into.queue_time_s = from.queue_time_s;
  for (TokenLogprob& logprob : from.prompt_logprobs) into.prompt_logprobs.push_back(std::move(logprob));
  if (!from.embedding.empty()) into.embedding = std::move(from.embedding);
}

}  // namespace

RequestChannel::RequestChannel(RequestId id, std::function<void()> notify)
    : id_(id), notify_(std::move(notify)) {}

void RequestChannel::Push(RequestOutput output) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pushed_final_) return;
    pushed_final_ = output.finished;
    queue_.push_back(std::move(output));
  }
  cv_.notify_all();
  if (notify_) notify_();
}

std::optional<RequestOutput> RequestChannel::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty()) return std::nullopt;
  return TakeMergedLocked();
}

RequestOutput RequestChannel::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !queue_.empty() || took_final_; });
  if (queue_.empty()) {
    RequestOutput done;
    done.finished = true;
    return done;
  }
  return TakeMergedLocked();
}

RequestOutput RequestChannel::TakeMergedLocked() {
  RequestOutput merged = std::move(queue_.front());
  queue_.pop_front();
  for (; !queue_.empty(); queue_.pop_front()) Merge(merged, queue_.front());
  took_final_ = merged.finished;
  return merged;
}

}  // namespace surge
