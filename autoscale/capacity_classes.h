// CapacityClasses: a pool's ordered capacity classes (spot, then on-demand), with the
// bookkeeping and decisions of placement, removal order, reclaim back-off and cost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autoscale/civil_time.h"
#include "base/status.h"

namespace surge::autoscale {

struct CapacityClassConfig {
  std::string name;
  int max_replicas = 0;
  double usd_per_hour = 0;  // per replica
  // Spot-like: a replica of this class that exits without being asked to was reclaimed (its
  // class backs off and the replacement goes to the next class with room). Otherwise an
  // unexpected exit is a crash, and the same replica restarts in place.
  bool preemptible = false;
  // After a reclaim the class takes no new replica for initial_backoff, doubling with each
  // reclaim that follows within backoff_reset of the previous one, up to max_backoff.
  Duration initial_backoff{std::chrono::seconds(30)};
  Duration max_backoff{std::chrono::minutes(10)};
  Duration backoff_reset{std::chrono::minutes(30)};
};

// Errors name the class and field; class names must be unique and non-empty.
Status ValidateCapacityClasses(const std::vector<CapacityClassConfig>& classes);

using ReplicaId = int64_t;

class CapacityClasses {
 public:
  // The configs must pass ValidateCapacityClasses; order is preference order.
  explicit CapacityClasses(std::vector<CapacityClassConfig> classes);

  // The class for the next replica: the first with room that is not in back-off at `now`.
  // nullopt when every class is full or backing off (capacity is not an error).
  std::optional<size_t> PlaceNext(Instant now) const;
  // Records a replica started in a class (pending until MarkReady). Returns its id.
  ReplicaId Add(size_t class_index, Instant now);
  void MarkReady(ReplicaId id);
  // Which replica to stop first on scale-down: most expensive class first (ties: later in the
  // order); within it a replica still loading before a ready one, then the newest.
  std::optional<ReplicaId> PickForRemoval() const;
  // A replica stopped by scale-down (no back-off). False for an unknown id.
  bool Remove(ReplicaId id);
  // A replica killed without warning (spot reclaim): removed, and its class backs off.
  bool Reclaimed(ReplicaId id, Instant now);

  // A replica to move to a cheaper class now that one has room again (after back-off):
  // make-before-break, the caller adds in `to_class`, waits for it to be ready, then removes
  // `replica`. nullopt when every replica is already in the cheapest class that has room.
  struct Move {
    ReplicaId replica = 0;
    size_t from_class = 0;
    size_t to_class = 0;
  };
  std::optional<Move> Rebalance(Instant now) const;

  bool InBackoff(size_t class_index, Instant now) const { return now < state_[class_index].backoff_until; }
  Instant BackoffUntil(size_t class_index) const { return state_[class_index].backoff_until; }
  int NumReplicas(size_t class_index) const;
  int NumReplicas() const { return static_cast<int>(replicas_.size()); }
  // Sum of max_replicas over the classes: the most replicas the pool can hold.
  int Capacity() const;
  double UsdPerHour(size_t class_index) const;
  double UsdPerHour() const;
  std::optional<size_t> ClassOf(ReplicaId id) const;
  const std::vector<CapacityClassConfig>& classes() const { return classes_; }

 private:
  struct Replica {
    size_t class_index = 0;
    Instant started;
    bool ready = false;
  };
  struct ClassState {
    Instant backoff_until{};
    Instant last_reclaim{};
    int num_recent_reclaims = 0;
  };
  std::optional<size_t> CheapestWithRoom(Instant now, double below_usd_per_hour) const;

  std::vector<CapacityClassConfig> classes_;
  std::vector<ClassState> state_;
  std::map<ReplicaId, Replica> replicas_;
  ReplicaId next_id_ = 1;
};

}  // namespace surge::autoscale
