// VirtualClock: a settable millisecond clock for the tier tests (no sleeps).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace surge::router {

struct VirtualClock {
  std::atomic<int64_t> now_ms{1000};
  std::function<int64_t()> Fn() {
    return [this] { return now_ms.load(); };
  }
  void Advance(int64_t ms) { now_ms += ms; }
};

}  // namespace surge::router
