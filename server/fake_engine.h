// FakeEngine: a scripted EngineClient for the server tests — it records submissions and
// cancellations, refuses on demand, and emits whatever output a test dictates.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/engine_client.h"

namespace surge::testing_util {

class FakeStream : public RequestStream {
 public:
  explicit FakeStream(RequestId id) : id_(id) {}
  RequestId id() const override { return id_; }
  std::optional<RequestOutput> Poll() override;
  RequestOutput Wait() override;
  // Merged into what the next Poll returns.
  void Push(RequestOutput output);

 private:
  const RequestId id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<RequestOutput> pending_;  // guarded by mu_
  bool ended_ = false;                    // guarded by mu_
};

class FakeEngine : public EngineClient {
 public:
  struct Submitted {
    EngineRequest request;
    std::shared_ptr<FakeStream> stream;
    std::function<void()> notify;
  };

  StatusOr<std::shared_ptr<RequestStream>> Submit(EngineRequest request, std::function<void()> notify) override;
  // Records the id; the stream then ends with finish reason abort, as the engine's does.
  void Cancel(RequestId id) override;
  EngineStats Stats() const override;

  void Refuse(Status status);
  void SetStats(EngineStats stats);
  // Pushes `output` to the i-th submitted request and notifies, from the caller's thread.
  void Emit(size_t i, RequestOutput output);
  // Blocks (up to 5 s) until `count` requests were submitted / cancelled.
  bool WaitForSubmitted(size_t count);
  bool WaitForCancelled(size_t count);
  Submitted submitted(size_t i);
  size_t num_submitted();
  std::vector<RequestId> cancelled();

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Submitted> submitted_;
  std::vector<RequestId> cancelled_;
  Status refusal_;
  EngineStats stats_{.ready = true};
  uint64_t next_id_ = 1;  // the next RequestId
};

// One delta of `tokens` for choice `index`, with `text`.
RequestOutput Delta(int32_t index, std::string text, std::vector<int32_t> tokens,
                    std::optional<FinishReason> finish = std::nullopt, bool finished = false);

}  // namespace surge::testing_util
