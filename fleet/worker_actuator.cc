#include "fleet/worker_actuator.h"

#include <cstdio>
#include <deque>
#include <map>
#include <optional>

#include "router/workers/worker_supervisor.h"

namespace surge {
namespace {

using autoscale::CapacityClasses;
using autoscale::Instant;
using autoscale::ReplicaId;

// One pool's workers on the classes' books: worker name -> replica, replicas placed but not
// yet seen as a worker slot, and the move back to a cheaper class in progress.
struct PoolBooks {
  std::map<std::string, ReplicaId> ids;
  // Exits nobody asked for (a Restart() is not a reclaim), as last seen: a rise is a reclaim.
  std::map<std::string, int32_t> num_unasked_exits;
  std::deque<ReplicaId> unbound;
  std::optional<CapacityClasses::Move> move;
  ReplicaId move_target = 0;
};

int32_t UnaskedExits(const router::WorkerInfo& worker) {
  return worker.num_restarts - worker.num_requested_restarts;
}

class WorkerActuator final : public ScaleActuator {
 public:
  WorkerActuator(const router::RouteConfig& config, router::WorkerSupervisor& workers)
      : config_(config), workers_(workers) {}

  bool Scales(const std::string& pool) const override {
    auto it = config_.pools.find(pool);
    return it != config_.pools.end() && it->second.spawn > 0;
  }
  bool PlacesClasses() const override { return true; }

  int NumPending(const std::string& pool, int) override {
    int num = 0;
    for (const router::WorkerInfo& worker : workers_.workers()) {
      const bool coming = worker.state == router::WorkerState::kStarting || worker.state == router::WorkerState::kBackoff;
      num += worker.pool == pool && coming ? 1 : 0;
    }
    return num;
  }

  Status Resize(const std::string& pool, int num_replicas, CapacityClasses& classes, Instant now) override {
    PoolBooks& books = books_[pool];
    while (classes.NumReplicas() < num_replicas) {
      std::optional<size_t> cls = classes.PlaceNext(now);
      if (!cls) break;  // every class full or backing off: capacity, not an error
      books.unbound.push_back(classes.Add(*cls, now));
    }
    while (classes.NumReplicas() > num_replicas) {
      std::optional<ReplicaId> id = classes.PickForRemoval();
      if (!id) break;
      RemoveReplica(pool, books, classes, *id);
    }
    return workers_.Resize(pool, classes.NumReplicas());
  }

  void Reconcile(const std::string& pool, CapacityClasses& classes, Instant now) override {
    PoolBooks& books = books_[pool];
    bool resize = false;
    for (const router::WorkerInfo& worker : workers_.workers()) {
      if (worker.pool != pool || worker.state == router::WorkerState::kStopping) continue;
      resize |= Observe(worker, books, classes, now);
    }
    resize |= AdvanceMove(pool, books, classes, now);
    if (resize) (void)workers_.Resize(pool, classes.NumReplicas());
  }

 private:
  // Binds a new slot to its replica, marks it ready, and handles a reclaim. True when the
  // pool's worker count must follow the books.
  bool Observe(const router::WorkerInfo& worker, PoolBooks& books, CapacityClasses& classes, Instant now) {
    auto [it, fresh] = books.ids.try_emplace(worker.name, 0);
    if (fresh) {
      if (!books.unbound.empty()) {
        it->second = books.unbound.front();
        books.unbound.pop_front();
      } else {  // a worker of --spawn N, there before the autoscaler placed anything
        it->second = classes.Add(classes.PlaceNext(now).value_or(classes.classes().size() - 1), now);
      }
      books.num_unasked_exits[worker.name] = UnaskedExits(worker);
    }
    const ReplicaId id = it->second;
    if (worker.state == router::WorkerState::kUp) classes.MarkReady(id);
    const bool exited = UnaskedExits(worker) > books.num_unasked_exits[worker.name] ||
                        (worker.state == router::WorkerState::kBackoff && !worker.restarting_on_request);
    books.num_unasked_exits[worker.name] = UnaskedExits(worker);
    const std::optional<size_t> cls = classes.ClassOf(id);
    if (!exited || !cls || !classes.classes()[*cls].preemptible) return false;
    classes.Reclaimed(id, now);
    Forget(books, worker.name);
    (void)workers_.Retire(worker.name);
    std::optional<size_t> next = classes.PlaceNext(now);
    if (next) books.unbound.push_back(classes.Add(*next, now));
    std::fprintf(stderr, "surge route: autoscale pool %s: worker %s (class %s) reclaimed; %s\n", worker.pool.c_str(),
                 worker.name.c_str(), classes.classes()[*cls].name.c_str(),
                 next ? ("replaced in class " + classes.classes()[*next].name).c_str() : "no class has room");
    return true;
  }

  // Make-before-break back to a cheaper class: start the target, then retire the source once
  // the target serves. True when the pool's worker count must follow the books.
  bool AdvanceMove(const std::string& pool, PoolBooks& books, CapacityClasses& classes, Instant now) {
    if (books.move) {
      const bool target_gone = !classes.ClassOf(books.move_target);
      const bool source_gone = !classes.ClassOf(books.move->replica);
      if (target_gone || source_gone) {
        books.move.reset();
        return false;
      }
      if (!IsReady(books, books.move_target)) return false;
      RemoveReplica(pool, books, classes, books.move->replica);
      books.move.reset();
      return true;
    }
    std::optional<CapacityClasses::Move> move = classes.Rebalance(now);
    if (!move) return false;
    books.move = move;
    books.move_target = classes.Add(move->to_class, now);
    books.unbound.push_back(books.move_target);
    std::fprintf(stderr, "surge route: autoscale pool %s: moving a replica from class %s to %s\n", pool.c_str(),
                 classes.classes()[move->from_class].name.c_str(), classes.classes()[move->to_class].name.c_str());
    return true;
  }

  bool IsReady(const PoolBooks& books, ReplicaId id) {
    for (const auto& [name, bound] : books.ids) {
      if (bound != id) continue;
      for (const router::WorkerInfo& worker : workers_.workers()) {
        if (worker.name == name) return worker.state == router::WorkerState::kUp;
      }
    }
    return false;
  }

  // Off the books; its worker (if it has one yet) is drained and stopped.
  void RemoveReplica(const std::string& pool, PoolBooks& books, CapacityClasses& classes, ReplicaId id) {
    classes.Remove(id);
    std::erase(books.unbound, id);
    for (const auto& [name, bound] : books.ids) {
      if (bound != id) continue;
      const std::string retired = name;
      Forget(books, retired);
      if (Status status = workers_.Retire(retired); !status.ok()) {
        std::fprintf(stderr, "surge route: autoscale pool %s: %s\n", pool.c_str(), status.message().c_str());
      }
      return;
    }
  }

  static void Forget(PoolBooks& books, const std::string& name) {
    books.ids.erase(name);
    books.num_unasked_exits.erase(name);
  }

  const router::RouteConfig& config_;
  router::WorkerSupervisor& workers_;
  std::map<std::string, PoolBooks> books_;  // the autoscaler's thread only
};

}  // namespace

std::unique_ptr<ScaleActuator> MakeWorkerActuator(const router::RouteConfig& config, router::WorkerSupervisor& workers) {
  return std::make_unique<WorkerActuator>(config, workers);
}

}  // namespace surge
