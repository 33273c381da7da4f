// Deadline: a re-armable one-shot timer whose stale expiries are ignored. Internal to net/.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <utility>

namespace surge::net::internal {

// Arming again replaces the previous deadline. A generation number guards against the
// race where the old timer already fired and its handler is queued: that handler sees a
// newer generation and does nothing. `on_expire` must keep the owner (and so this
// Deadline) alive, e.g. by capturing a shared_ptr to it.
class Deadline {
 public:
  explicit Deadline(const boost::asio::any_io_executor& executor) : timer_(executor) {}

  template <typename Callback>
  void Arm(int64_t timeout_ms, Callback on_expire) {
    ++generation_;
    if (timeout_ms <= 0) {
      timer_.cancel();
      return;
    }
    timer_.expires_after(std::chrono::milliseconds(timeout_ms));
    timer_.async_wait([this, generation = generation_, on_expire = std::move(on_expire)](
                          const boost::system::error_code& ec) mutable {
      if (!ec && generation == generation_) on_expire();
    });
  }

  void Disarm() {
    ++generation_;
    timer_.cancel();
  }

 private:
  boost::asio::steady_timer timer_;
  uint64_t generation_ = 0;
};

}  // namespace surge::net::internal
