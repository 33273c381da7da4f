#include "base/phase_profile.h"

#include <gtest/gtest.h>

namespace surge {
namespace {

class PhaseProfileTest : public ::testing::Test {
 protected:
  void SetUp() override { was_enabled_ = PhaseProfileEnabled(); }
  void TearDown() override {
    EnablePhaseProfile(was_enabled_);
    ResetPhaseProfile();
  }
  bool was_enabled_ = false;
};

TEST_F(PhaseProfileTest, OffRecordsNothing) {
  EnablePhaseProfile(false);
  ResetPhaseProfile();
  PhaseMarks marks;
  marks.Mark(Phase::kQkv);
  { PhaseSpan span(Phase::kSampling); }
  const PhaseTotals totals = PhaseProfileSnapshot();
  EXPECT_EQ(totals.calls[static_cast<int>(Phase::kQkv)], 0);
  EXPECT_EQ(totals.calls[static_cast<int>(Phase::kSampling)], 0);
  EXPECT_EQ(PhaseProfilePrometheus(), "");
}

TEST_F(PhaseProfileTest, MarksChargeEachPhaseOnce) {
  EnablePhaseProfile(true);
  ResetPhaseProfile();
  const PhaseTotals before = PhaseProfileSnapshot();
  PhaseMarks marks;
  marks.Mark(Phase::kQkv);
  marks.Mark(Phase::kAttention);
  marks.Mark(Phase::kQkv);
  { PhaseSpan span(Phase::kSampling); }
  const PhaseTotals since = PhaseTotalsSince(before, PhaseProfileSnapshot());
  EXPECT_EQ(since.calls[static_cast<int>(Phase::kQkv)], 2);
  EXPECT_EQ(since.calls[static_cast<int>(Phase::kAttention)], 1);
  EXPECT_EQ(since.calls[static_cast<int>(Phase::kSampling)], 1);
  EXPECT_EQ(since.calls[static_cast<int>(Phase::kLogits)], 0);
  for (int i = 0; i < kNumPhases; ++i) EXPECT_GE(since.ns[i], 0) << PhaseName(static_cast<Phase>(i));
}

TEST_F(PhaseProfileTest, PrometheusNamesEveryPhase) {
  EnablePhaseProfile(true);
  const std::string text = PhaseProfilePrometheus();
  for (int i = 0; i < kNumPhases; ++i) {
    const std::string name(PhaseName(static_cast<Phase>(i)));
    EXPECT_NE(text.find("surge_phase_seconds_total{phase=\"" + name + "\"}"), std::string::npos) << name;
    EXPECT_NE(text.find("surge_phase_calls_total{phase=\"" + name + "\"}"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace surge
