// RequestChannel: the RequestStream the engine hands out -- the engine thread pushes each
// step's output for a request, the consumer (an HTTP handler, a test) drains it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "engine/engine_client.h"

namespace surge {

class RequestChannel final : public RequestStream {
 public:
  // `notify` (may be empty) runs on the pushing thread after each Push.
  RequestChannel(RequestId id, std::function<void()> notify);

  RequestId id() const override { return id_; }
  std::optional<RequestOutput> Poll() override;
  // After the final output has been taken, returns an empty output with finished set
  // at once instead of blocking forever.
  RequestOutput Wait() override;

  // Engine thread. Appends `output` and then calls notify, with no lock held, so that
  // notify may post work anywhere (even call Poll). Outputs after a finished one are
  // dropped.
  void Push(RequestOutput output);

 private:
  // Everything queued, merged into one output; caller holds mu_ and queue_ is not empty.
  RequestOutput TakeMergedLocked();

  const RequestId id_;
  const std::function<void()> notify_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RequestOutput> queue_;  // guarded by mu_; merged on Poll / Wait
  bool pushed_final_ = false;        // guarded by mu_
  bool took_final_ = false;          // guarded by mu_
};

}  // namespace surge
