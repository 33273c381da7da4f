// TierMetrics: the exposition carries the tier objects' state after a refresh.
#include "router/tiers/tier_metrics.h"

#include <gtest/gtest.h>

#include "router/tiers/test_clock.h"

namespace surge::router {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(TierMetricsTest, ExposesQueuesTtftAndBorrowing) {
  VirtualClock clock;
  obs::Registry registry;
  TierMetrics metrics(&registry);
  TierAdmissionOptions admission_options;
  admission_options.num_slots = 1;
  admission_options.max_queued = {1, 1, 1};
  admission_options.now_ms = clock.Fn();
  TierAdmission admission(admission_options);
  const TicketId running = admission.Admit(Tier::kNormal, nullptr).ticket;
  const TicketId queued = admission.Admit(Tier::kBatch, nullptr).ticket;
  ASSERT_EQ(admission.Admit(Tier::kBatch, nullptr).status.code(), StatusCode::kResourceExhausted);
  admission.Admit(Tier::kRealtime, nullptr);
  ASSERT_TRUE(admission.Cancel(queued));
  TtftWindowOptions window_options;
  window_options.now_ms = clock.Fn();
  TtftWindow window(window_options);
  BorrowPolicyOptions policy_options;
  policy_options.min_samples = 1;
  BorrowPolicy policy(policy_options, &window);
  window.Add(Tier::kRealtime, 2500);
  metrics.ObserveTtft(Tier::kRealtime, 2500);

  metrics.Refresh("P2", admission);
  metrics.Refresh(window, policy);
  std::string text = registry.Expose();
  EXPECT_TRUE(Has(text, R"(surge_router_tier_queue_depth{pool="P2",tier="realtime"} 1)")) << text;
  EXPECT_TRUE(Has(text, R"(surge_router_tier_queue_depth{pool="P2",tier="batch"} 0)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_admitted_total{pool="P2",tier="normal"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_rejected_total{pool="P2",tier="batch"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_cancelled_total{pool="P2",tier="batch"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_pool_slots{pool="P2"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_pool_slots_in_use{pool="P2"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_ttft_seconds_count{tier="realtime"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_ttft_p95_seconds{tier="realtime"} 2.5)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_ttft_p95_seconds{tier="batch"} NaN)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_borrowing{tier="realtime"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_borrows_total{tier="realtime"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_pool_needs_capacity{pool="P1"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_pool_needs_capacity{pool="P3"} 0)"));

  admission.Release(running);  // the realtime waiter takes the slot
  metrics.Refresh("P2", admission);
  metrics.Refresh("P2", admission);  // refreshing twice counts nothing twice
  text = registry.Expose();
  EXPECT_TRUE(Has(text, R"(surge_router_tier_queue_depth{pool="P2",tier="realtime"} 0)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_admitted_total{pool="P2",tier="realtime"} 1)"));
  EXPECT_TRUE(Has(text, R"(surge_router_tier_admitted_total{pool="P2",tier="normal"} 1)"));
}

}  // namespace
}  // namespace surge::router
