#include "engine/scheduling_policy.h"

#include <string>

namespace surge {

size_t PriorityPolicy::PickNextWaiting(const std::deque<Sequence*>& waiting) const {
  size_t best = 0;
  double best_key = Key(*waiting[0]);
  for (size_t i = 1; i < waiting.size(); ++i) {
    const double key = Key(*waiting[i]);
    if (key < best_key) best = i, best_key = key;
  }
  return best;
}

size_t PriorityPolicy::PickVictim(std::span<Sequence* const> running) const {
  size_t worst = 0;
  double worst_key = Key(*running[0]);
  for (size_t i = 1; i < running.size(); ++i) {
    const double key = Key(*running[i]);
    if (key >= worst_key) worst = i, worst_key = key;  // ties: the most recently admitted
  }
  return worst;
}

StatusOr<SchedulingPolicyKind> ParseSchedulingPolicy(std::string_view name) {
  if (name == "fcfs") return SchedulingPolicyKind::kFcfs;
  if (name == "priority") return SchedulingPolicyKind::kPriority;
  return InvalidArgumentError("scheduling policy must be fcfs or priority, got '" + std::string(name) + "'");
}

std::unique_ptr<SchedulingPolicy> MakeSchedulingPolicy(SchedulingPolicyKind kind, double aging_seconds) {
  if (kind == SchedulingPolicyKind::kPriority) return std::make_unique<PriorityPolicy>(aging_seconds);
  return std::make_unique<FcfsPolicy>();
}

}  // namespace surge
