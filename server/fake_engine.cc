#include "server/fake_engine.h"

#include <chrono>

namespace surge::testing_util {

std::optional<RequestOutput> FakeStream::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<RequestOutput> output = std::move(pending_);
  pending_.reset();
  return output;
}

RequestOutput FakeStream::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return pending_.has_value(); });
  RequestOutput output = std::move(*pending_);
  pending_.reset();
  return output;
}

void FakeStream::Push(RequestOutput output) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return;
  ended_ = output.finished;
  if (!pending_) {
    pending_ = std::move(output);
  } else {
    for (ChoiceDelta& delta : output.choices) pending_->choices.push_back(std::move(delta));
    pending_->finished = output.finished;
    if (!output.error.ok()) pending_->error = output.error;
    pending_->num_prompt_tokens = output.num_prompt_tokens;
    pending_->num_completion_tokens = output.num_completion_tokens;
  }
  cv_.notify_all();
}

StatusOr<std::shared_ptr<RequestStream>> FakeEngine::Submit(EngineRequest request, std::function<void()> notify) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!refusal_.ok()) return refusal_;
  auto stream = std::make_shared<FakeStream>(RequestId{next_id_++});
  submitted_.push_back({std::move(request), stream, std::move(notify)});
  cv_.notify_all();
  return std::shared_ptr<RequestStream>(stream);
}

void FakeEngine::Cancel(RequestId id) {
  std::function<void()> notify;
  std::shared_ptr<FakeStream> stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.push_back(id);
    cv_.notify_all();
    for (Submitted& s : submitted_) {
      if (s.stream->id() == id) stream = s.stream, notify = s.notify;
    }
  }
  if (!stream) return;
  stream->Push(Delta(0, "", {}, FinishReason::kAbort, true));
  notify();
}

EngineStats FakeEngine::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void FakeEngine::Refuse(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  refusal_ = std::move(status);
}

void FakeEngine::SetStats(EngineStats stats) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_ = stats;
}

void FakeEngine::Emit(size_t i, RequestOutput output) {
  Submitted s = submitted(i);
  s.stream->Push(std::move(output));
  s.notify();
}

bool FakeEngine::WaitForSubmitted(size_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return submitted_.size() >= count; });
}

bool FakeEngine::WaitForCancelled(size_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return cancelled_.size() >= count; });
}

FakeEngine::Submitted FakeEngine::submitted(size_t i) {
  std::lock_guard<std::mutex> lock(mu_);
  return submitted_.at(i);
}

size_t FakeEngine::num_submitted() {
  std::lock_guard<std::mutex> lock(mu_);
  return submitted_.size();
}

std::vector<RequestId> FakeEngine::cancelled() {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

RequestOutput Delta(int32_t index, std::string text, std::vector<int32_t> tokens, std::optional<FinishReason> finish,
                    bool finished) {
  RequestOutput output;
  ChoiceDelta delta;
  delta.index = index;
  delta.text = std::move(text);
  delta.token_ids = std::move(tokens);
  delta.finish_reason = finish;
  output.choices.push_back(std::move(delta));
  output.finished = finished;
  output.num_prompt_tokens = 3;
  return output;
}

}  // namespace surge::testing_util
