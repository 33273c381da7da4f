// The tier pieces together, as the gateway wires them, in a discrete-event simulation in
// virtual time: realtime overloads its dedicated pool, its P95 TTFT passes 2 s, it borrows
// the shared pool (where the admission weights favour it over batch), TTFT recovers, and
// once the overload is over it gives the capacity back -- once, without flapping.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "obs/percentile.h"
#include "router/tiers/borrow_policy.h"
#include "router/tiers/test_clock.h"
#include "router/tiers/tier_admission.h"
#include "router/tiers/ttft_window.h"

namespace surge::router {
namespace {

constexpr int64_t kServiceMs = 1000;  // each request holds its slot this long
constexpr int64_t kPrefillMs = 100;   // TTFT = wait for a slot + this
constexpr int64_t kStepMs = 10;

class Simulation {
 public:
  explicit Simulation(bool borrowing) : window_(WindowOptions()), policy_(PolicyOptions(borrowing), &window_) {
    AddPool("P1", 2);  // realtime's dedicated pool: half of what the overload needs
    AddPool("P2", 8);  // shared by normal and batch
  }

  // Runs until `until_ms`, with a realtime request every `realtime_every_ms` and a batch one
  // every `batch_every_ms`. TTFTs of this phase land in `phase_ttft_ms_`.
  void Run(int64_t until_ms, int64_t realtime_every_ms, int64_t batch_every_ms) {
    phase_ttft_ms_ = {};
    for (; clock_.now_ms < until_ms; clock_.Advance(kStepMs)) {
      FinishDue();
      const int64_t now = clock_.now_ms;
      if (now % realtime_every_ms == 0) Submit(Tier::kRealtime);
      if (now % batch_every_ms == 0) Submit(Tier::kBatch);
    }
  }

  double PhaseP95(Tier tier) const { return obs::Percentile(phase_ttft_ms_[TierIndex(tier)], 0.95); }
  BorrowPolicy& policy() { return policy_; }
  int num_realtime_in_p2() const { return num_realtime_in_p2_; }
  int num_rejected() const { return num_rejected_; }

 private:
  TtftWindowOptions WindowOptions() {
    TtftWindowOptions options;
    options.window_ms = 10000;
    options.now_ms = clock_.Fn();
    return options;
  }
  static BorrowPolicyOptions PolicyOptions(bool borrowing) {
    BorrowPolicyOptions options;
    options.pools = {"P1", "P2", "P2"};
    options.threshold_ms = borrowing ? std::array<double, 3>{2000, 5000, 0} : std::array<double, 3>{0, 0, 0};
    options.min_samples = 10;
    options.hold_ms = 5000;
    return options;
  }
  void AddPool(const std::string& name, int32_t num_slots) {
    TierAdmissionOptions options;
    options.num_slots = num_slots;
    options.now_ms = clock_.Fn();
    pools_[name] = std::make_unique<TierAdmission>(options);
  }

  // The gateway's choice: the first allowed pool with a free slot, else the allowed pool
  // where this tier's queue is shortest (its own on ties).
  std::string ChoosePool(Tier tier) {
    const std::vector<std::string> allowed = policy_.PoolsFor(tier);
    for (const std::string& name : allowed) {
      if (pools_[name]->num_in_use() < pools_[name]->num_slots()) return name;
    }
    std::string best = allowed.front();
    for (const std::string& name : allowed) {
      if (pools_[name]->QueueDepth(tier) < pools_[best]->QueueDepth(tier)) best = name;
    }
    return best;
  }

  void Submit(Tier tier) {
    const std::string pool = ChoosePool(tier);
    TierAdmission* admission = pools_[pool].get();
    const int64_t arrival_ms = clock_.now_ms;
    const TierAdmission::AdmitResult result = admission->Admit(tier, [=, this](TicketId ticket) {
      Start(tier, pool, arrival_ms, ticket);
    });
    if (!result.status.ok()) ++num_rejected_;
    if (result.status.ok() && result.admitted) Start(tier, pool, arrival_ms, result.ticket);
  }

  void Start(Tier tier, const std::string& pool, int64_t arrival_ms, TicketId ticket) {
    const double ttft_ms = static_cast<double>(clock_.now_ms - arrival_ms + kPrefillMs);
    window_.Add(tier, ttft_ms);
    phase_ttft_ms_[TierIndex(tier)].push_back(ttft_ms);
    if (tier == Tier::kRealtime && pool == "P2") ++num_realtime_in_p2_;
    running_.emplace(clock_.now_ms + kServiceMs, std::make_pair(pools_[pool].get(), ticket));
  }

  void FinishDue() {
    std::vector<std::pair<TierAdmission*, TicketId>> due;
    while (!running_.empty() && running_.begin()->first <= clock_.now_ms) {
      due.push_back(running_.begin()->second);
      running_.erase(running_.begin());
    }
    for (auto& [admission, ticket] : due) admission->Release(ticket);  // may Start waiters
  }

  VirtualClock clock_;
  TtftWindow window_;
  BorrowPolicy policy_;
  std::map<std::string, std::unique_ptr<TierAdmission>> pools_;
  std::multimap<int64_t, std::pair<TierAdmission*, TicketId>> running_;  // by end time
  std::array<std::vector<double>, kNumTiers> phase_ttft_ms_;
  int num_realtime_in_p2_ = 0;
  int num_rejected_ = 0;
};

TEST(TiersSimulationTest, RealtimeBorrowsUnderOverloadAndGivesBack) {
  Simulation with(/*borrowing=*/true);
  Simulation without(/*borrowing=*/false);
  // 15 s of overload: realtime at 4/s needs 4 slots and has 2; batch at ~3/s uses 3 of 8.
  with.Run(16000, 250, 330);
  without.Run(16000, 250, 330);
  const double with_p95_ms = with.PhaseP95(Tier::kRealtime);
  const double without_p95_ms = without.PhaseP95(Tier::kRealtime);
  std::printf("realtime P95 TTFT under overload: %.0f ms with borrowing, %.0f ms without\n", with_p95_ms,
              without_p95_ms);
  EXPECT_EQ(with.policy().State(Tier::kRealtime).num_borrows, 1u);
  EXPECT_TRUE(with.policy().NeedsCapacity("P1"));
  EXPECT_GT(with.num_realtime_in_p2(), 10);
  EXPECT_EQ(without.num_realtime_in_p2(), 0);
  EXPECT_GT(without_p95_ms, 5000);  // its queue only grows
  EXPECT_LT(with_p95_ms, without_p95_ms / 2) << with_p95_ms << " vs " << without_p95_ms;
  EXPECT_LT(with.PhaseP95(Tier::kBatch), 1000);  // the shared pool had room: batch kept going
  EXPECT_EQ(with.num_rejected(), 0);

  // The overload ends: realtime at 1/s fits its own pool. The slow samples age out of the
  // window, the P95 stays low for hold_ms, and the capacity goes back -- once.
  with.Run(60000, 1000, 330);
  const BorrowPolicy::TierState state = with.policy().State(Tier::kRealtime);
  EXPECT_FALSE(state.borrowing);
  EXPECT_EQ(state.num_borrows, 1u);
  EXPECT_EQ(state.num_give_backs, 1u);
  EXPECT_FALSE(with.policy().NeedsCapacity("P1"));
  EXPECT_EQ(with.policy().PoolsFor(Tier::kRealtime), std::vector<std::string>{"P1"});
  EXPECT_LT(with.PhaseP95(Tier::kRealtime), 1000);
}

}  // namespace
}  // namespace surge::router
