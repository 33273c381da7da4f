#include "router/workers/health_inbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <utility>

#include "base/check.h"

namespace surge::router::internal {

HealthInbox::HealthInbox() : wake_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  CHECK(wake_fd >= 0) << "eventfd failed";
}
HealthInbox::~HealthInbox() { close(wake_fd); }

void HealthInbox::Push(Result result) {
  {
    std::lock_guard lock(mu);
    results.push_back(result);
  }
  Wake();
}

std::vector<HealthInbox::Result> HealthInbox::TakeAll() {
  std::lock_guard lock(mu);
  return std::exchange(results, {});
}

void HealthInbox::Wake() const {
  const uint64_t one = 1;
  ssize_t ignored = write(wake_fd, &one, sizeof one);
  (void)ignored;
}

void HealthInbox::DrainWake() const {
  uint64_t count;
  ssize_t ignored = read(wake_fd, &count, sizeof count);
  (void)ignored;
}

}  // namespace surge::router::internal
