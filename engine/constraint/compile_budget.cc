#include "engine/constraint/compile_budget.h"

#include <string>

namespace surge {

bool CompileBudget::CheckClock() {
  if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) return Fail(Failure::kCancelled);
  if (has_deadline_ && Clock::now() >= deadline_) return Fail(Failure::kDeadline);
  return true;
}

Status CompileBudget::status() const {
  switch (failure_) {
    case Failure::kNone: return OkStatus();
    case Failure::kSteps:
      return ResourceExhaustedError("constraint: grammar too costly to compile (more than " +
                                    std::to_string(max_steps_) + " steps of determinization)");
    case Failure::kDeadline:
      return Status(StatusCode::kDeadlineExceeded, "constraint: compiling the grammar passed its deadline");
    case Failure::kCancelled:
      return Status(StatusCode::kCancelled, "constraint: compile cancelled (the request was cancelled)");
  }
  return OkStatus();
}

}  // namespace surge
