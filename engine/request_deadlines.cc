#include "engine/request_deadlines.h"

#include <algorithm>

namespace surge {

void RequestDeadlines::Add(double deadline_s, RequestId id) {
  heap_.emplace_back(deadline_s, id);
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void RequestDeadlines::TakeDue(double now_s, size_t num_live, const std::function<bool(RequestId)>& live,
                               std::vector<RequestId>& due) {
  if (heap_.size() > 2 * num_live + 64) {
    std::erase_if(heap_, [&live](const auto& entry) { return !live(entry.second); });
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
  while (!heap_.empty() && heap_.front().first <= now_s) {
    due.push_back(heap_.front().second);
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
  }
}

}  // namespace surge
