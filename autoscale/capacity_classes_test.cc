#include "autoscale/capacity_classes.h"

#include <gtest/gtest.h>

#include "autoscale/autoscaler.h"
#include "autoscale/test_util.h"

namespace surge::autoscale {
namespace {

using std::chrono::seconds;

Instant T(int64_t s) { return Utc(2024, 5, 6) + seconds(s); }

std::vector<CapacityClassConfig> SpotThenOnDemand() {
  return {CapacityClassConfig{"spot", 2, 0.9}, CapacityClassConfig{"on-demand", 3, 3.2}};
}

TEST(CapacityClassesTest, PlacesInOrderUntilFull) {
  CapacityClasses classes(SpotThenOnDemand());
  std::vector<size_t> placed;
  while (std::optional<size_t> next = classes.PlaceNext(T(0))) {
    placed.push_back(*next);
    classes.Add(*next, T(0));
  }
  EXPECT_EQ(placed, (std::vector<size_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(classes.NumReplicas(), 5);
  EXPECT_EQ(classes.Capacity(), 5);
}

TEST(CapacityClassesTest, ReclaimedSpotFallsBackAndReturnsAfterBackoff) {
  CapacityClasses classes(SpotThenOnDemand());
  ReplicaId spot_a = classes.Add(0, T(0));
  classes.Add(0, T(0));
  ASSERT_TRUE(classes.Reclaimed(spot_a, T(100)));
  // Spot has room again but is backing off: the replacement goes on-demand.
  ASSERT_EQ(classes.PlaceNext(T(100)), 1u);
  ReplicaId on_demand = classes.Add(1, T(100));
  classes.MarkReady(on_demand);
  EXPECT_EQ(classes.PlaceNext(T(129)), 1u);
  EXPECT_FALSE(classes.Rebalance(T(129)));
  // After 30 s spot takes replicas again, and the on-demand one can move back.
  EXPECT_EQ(classes.PlaceNext(T(130)), 0u);
  std::optional<CapacityClasses::Move> move = classes.Rebalance(T(130));
  ASSERT_TRUE(move);
  EXPECT_EQ(move->replica, on_demand);
  EXPECT_EQ(move->from_class, 1u);
  EXPECT_EQ(move->to_class, 0u);
  EXPECT_FALSE(classes.Reclaimed(9999, T(130)));
}

TEST(CapacityClassesTest, BackoffDoublesOnRepeatedReclaimsAndResets) {
  std::vector<CapacityClassConfig> config = SpotThenOnDemand();
  config[0].max_backoff = seconds(100);
  config[0].backoff_reset = seconds(600);
  CapacityClasses classes(config);
  int64_t now = 0;
  std::vector<int64_t> backoffs;
  for (int i = 0; i < 4; ++i) {
    ReplicaId id = classes.Add(0, T(now));
    classes.Reclaimed(id, T(now));
    backoffs.push_back((classes.BackoffUntil(0) - T(now)) / seconds(1));
    now += 200;  // inside the reset window
  }
  EXPECT_EQ(backoffs, (std::vector<int64_t>{30, 60, 100, 100}));
  now += 600;  // a quiet stretch resets the exponent
  classes.Reclaimed(classes.Add(0, T(now)), T(now));
  EXPECT_EQ((classes.BackoffUntil(0) - T(now)) / seconds(1), 30);
}

TEST(CapacityClassesTest, RemovesMostExpensiveFirstThenLoadingThenNewest) {
  CapacityClasses classes(SpotThenOnDemand());
  ReplicaId spot = classes.Add(0, T(0));
  ReplicaId od_old = classes.Add(1, T(10));
  ReplicaId od_new = classes.Add(1, T(20));
  ReplicaId od_loading = classes.Add(1, T(5));
  for (ReplicaId id : {spot, od_old, od_new}) classes.MarkReady(id);
  std::vector<ReplicaId> order;
  while (std::optional<ReplicaId> id = classes.PickForRemoval()) {
    order.push_back(*id);
    ASSERT_TRUE(classes.Remove(*id));
  }
  EXPECT_EQ(order, (std::vector<ReplicaId>{od_loading, od_new, od_old, spot}));
  EXPECT_FALSE(classes.Remove(spot));
}

TEST(CapacityClassesTest, CostPerClassAndTotal) {
  CapacityClasses classes(SpotThenOnDemand());
  classes.Add(0, T(0));
  classes.Add(0, T(0));
  classes.Add(1, T(0));
  EXPECT_DOUBLE_EQ(classes.UsdPerHour(0), 1.8);
  EXPECT_DOUBLE_EQ(classes.UsdPerHour(1), 3.2);
  EXPECT_DOUBLE_EQ(classes.UsdPerHour(), 5.0);
}

TEST(CapacityClassesTest, ValidationNamesTheClass) {
  std::vector<CapacityClassConfig> config = SpotThenOnDemand();
  config[1].name = "spot";
  EXPECT_EQ(ValidateCapacityClasses(config).message(), "capacity class 'spot': duplicate name");
  config = SpotThenOnDemand();
  config[0].usd_per_hour = -1;
  EXPECT_EQ(ValidateCapacityClasses(config).message(), "capacity class 'spot': usd_per_hour must be >= 0");
}

TEST(PoolAutoscalerTest, ClassesCapTheMaximum) {
  PoolConfig pool;
  pool.name = "default";
  pool.policy.max_replicas = 50;
  pool.policy.targets.queue_depth_per_replica = 4;
  pool.classes = SpotThenOnDemand();
  PoolAutoscaler autoscaler(pool);
  PoolMetrics m;
  m.num_ready_replicas = 4;
  m.queue_depth_per_replica = 40;
  Decision d = autoscaler.Decide(T(0), m);
  EXPECT_EQ(d.desired_replicas, 5);
  EXPECT_EQ(d.bounds.source, "pool, capped by the capacity classes");
}

}  // namespace
}  // namespace surge::autoscale
