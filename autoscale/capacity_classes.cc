#include "autoscale/capacity_classes.h"

#include <set>

namespace surge::autoscale {

Status ValidateCapacityClasses(const std::vector<CapacityClassConfig>& classes) {
  std::set<std::string> names;
  for (const CapacityClassConfig& c : classes) {
    std::string where = "capacity class '" + c.name + "': ";
    if (c.name.empty()) return InvalidArgumentError("capacity class: name must not be empty");
    if (!names.insert(c.name).second) return InvalidArgumentError(where + "duplicate name");
    if (c.max_replicas < 0) return InvalidArgumentError(where + "max_replicas must be >= 0");
    if (!(c.usd_per_hour >= 0)) return InvalidArgumentError(where + "usd_per_hour must be >= 0");
    if (c.initial_backoff.count() <= 0) return InvalidArgumentError(where + "initial_backoff must be > 0");
    if (c.max_backoff < c.initial_backoff) return InvalidArgumentError(where + "max_backoff must be >= initial_backoff");
    if (c.backoff_reset.count() <= 0) return InvalidArgumentError(where + "backoff_reset must be > 0");
  }
  return OkStatus();
}

CapacityClasses::CapacityClasses(std::vector<CapacityClassConfig> classes)
    : classes_(std::move(classes)), state_(classes_.size()) {
  Status status = ValidateCapacityClasses(classes_);
  CHECK(status.ok()) << status.ToString();
}

int CapacityClasses::NumReplicas(size_t class_index) const {
  int num = 0;
  for (const auto& [id, r] : replicas_) num += r.class_index == class_index ? 1 : 0;
  return num;
}

int CapacityClasses::Capacity() const {
  int total = 0;
  for (const CapacityClassConfig& c : classes_) total += c.max_replicas;
  return total;
}

std::optional<size_t> CapacityClasses::PlaceNext(Instant now) const {
  for (size_t i = 0; i < classes_.size(); ++i) {
    if (NumReplicas(i) < classes_[i].max_replicas && !InBackoff(i, now)) return i;
  }
  return std::nullopt;
}

ReplicaId CapacityClasses::Add(size_t class_index, Instant now) {
  CHECK(class_index < classes_.size());
  ReplicaId id = next_id_++;
  replicas_[id] = Replica{class_index, now, false};
  return id;
}

void CapacityClasses::MarkReady(ReplicaId id) {
  if (auto it = replicas_.find(id); it != replicas_.end()) it->second.ready = true;
}

std::optional<ReplicaId> CapacityClasses::PickForRemoval() const {
  std::optional<ReplicaId> best;
  auto picks_first = [&](const Replica& a, const Replica& b) {  // remove a before b?
    double price_a = classes_[a.class_index].usd_per_hour, price_b = classes_[b.class_index].usd_per_hour;
    if (price_a != price_b) return price_a > price_b;
    if (a.class_index != b.class_index) return a.class_index > b.class_index;
    if (a.ready != b.ready) return !a.ready;
    return a.started >= b.started;
  };
  for (const auto& [id, r] : replicas_) {
    if (!best || picks_first(r, replicas_.at(*best))) best = id;
  }
  return best;
}

bool CapacityClasses::Remove(ReplicaId id) { return replicas_.erase(id) > 0; }

bool CapacityClasses::Reclaimed(ReplicaId id, Instant now) {
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return false;
  const CapacityClassConfig& config = classes_[it->second.class_index];
  ClassState& state = state_[it->second.class_index];
  replicas_.erase(it);
  bool recent = state.num_recent_reclaims > 0 && now - state.last_reclaim < config.backoff_reset;
  state.num_recent_reclaims = recent ? state.num_recent_reclaims + 1 : 1;
  state.last_reclaim = now;
  Duration backoff = config.initial_backoff;
  for (int i = 1; i < state.num_recent_reclaims && backoff < config.max_backoff; ++i) backoff *= 2;
  state.backoff_until = now + std::min(backoff, config.max_backoff);
  return true;
}

std::optional<size_t> CapacityClasses::CheapestWithRoom(Instant now, double below_usd_per_hour) const {
  std::optional<size_t> best;
  for (size_t i = 0; i < classes_.size(); ++i) {
    if (NumReplicas(i) >= classes_[i].max_replicas || InBackoff(i, now)) continue;
    if (classes_[i].usd_per_hour >= below_usd_per_hour) continue;
    if (!best || classes_[i].usd_per_hour < classes_[*best].usd_per_hour) best = i;
  }
  return best;
}

std::optional<CapacityClasses::Move> CapacityClasses::Rebalance(Instant now) const {
  // The most expensive ready replica first: it saves the most.
  std::optional<ReplicaId> source;
  for (const auto& [id, r] : replicas_) {
    if (!r.ready) continue;
    if (!source || classes_[r.class_index].usd_per_hour > classes_[replicas_.at(*source).class_index].usd_per_hour) {
      source = id;
    }
  }
  if (!source) return std::nullopt;
  size_t from = replicas_.at(*source).class_index;
  std::optional<size_t> to = CheapestWithRoom(now, classes_[from].usd_per_hour);
  if (!to) return std::nullopt;
  return Move{*source, from, *to};
}

double CapacityClasses::UsdPerHour(size_t class_index) const {
  return NumReplicas(class_index) * classes_[class_index].usd_per_hour;
}

double CapacityClasses::UsdPerHour() const {
  double total = 0;
  for (size_t i = 0; i < classes_.size(); ++i) total += UsdPerHour(i);
  return total;
}

std::optional<size_t> CapacityClasses::ClassOf(ReplicaId id) const {
  auto it = replicas_.find(id);
  return it == replicas_.end() ? std::nullopt : std::optional<size_t>(it->second.class_index);
}

}  // namespace surge::autoscale
