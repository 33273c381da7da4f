// Compiles cost bounded work and memory: the step budget, the automaton's byte bound, a
// deadline and a cancel flag each stop a compile with their own error; nested stars build
// their body once. No timing here: the bounds are asserted on counts and statuses.
#include "engine/constraint/compile_budget.h"

#include <gtest/gtest.h>

#include <atomic>

#include "engine/constraint/constraint.h"
#include "engine/constraint/matcher.h"
#include "engine/constraint/nfa.h"
#include "engine/constraint/regex_compiler.h"

namespace surge {
namespace {

ConstraintSpec Regex(std::string text) { return {ConstraintKind::kRegex, std::move(text), {}}; }

TEST(CompileBudgetTest, StepBudgetStopsTheBlowUpOfNestedCounts) {
  // Issue 31: 11 bytes that took 55-65 s and 521 MB; each doubling of {8} costs x7.7.
  for (const char* text : {"a?{1000}{8}", "a?{1000}{16}"}) {
    ConstraintLimits limits;
    CompileBudget budget(limits.max_compile_steps);
    auto compiled = CompileConstraint(Regex(text), limits, &budget);
    ASSERT_FALSE(compiled.ok()) << text;
    EXPECT_EQ(compiled.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(compiled.status().message().find("steps"), std::string_view::npos) << compiled.status().message();
    EXPECT_LT(budget.steps(), limits.max_compile_steps + 1'000'000) << "stopped near the budget";
  }
}

TEST(CompileBudgetTest, OrdinaryGrammarsStayFarBelowTheBudget) {
  ConstraintLimits limits;
  for (const char* text : {"[a-z]{1,1024}", "(\\d{3}-){0,100}[a-z0-9._%+-]{1,64}@[a-z]{1,63}\\.(com|org)", ".{1000}"}) {
    CompileBudget budget(limits.max_compile_steps);
    auto compiled = CompileConstraint(Regex(text), limits, &budget);
    ASSERT_TRUE(compiled.ok()) << text << ": " << compiled.status().message();
    EXPECT_LT(budget.steps() * 10, limits.max_compile_steps) << text;
  }
}

TEST(CompileBudgetTest, AutomatonBytesAreBounded) {
  ConstraintLimits limits;
  limits.max_compile_steps = int64_t{1} << 40;  // only the byte bound may stop it
  limits.max_automaton_bytes = 1 << 20;
  auto compiled = CompileConstraint(Regex("(.{1000}){5}"), limits);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(compiled.status().message().find("1 MiB"), std::string_view::npos) << compiled.status().message();
  limits.max_automaton_bytes = 64 << 20;
  compiled = CompileConstraint(Regex("(.{1000}){5}"), limits);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_GT((*compiled)->memory_bytes(), int64_t{95000} * (*compiled)->num_classes() * 4);
  EXPECT_LE((*compiled)->memory_bytes(), limits.max_automaton_bytes);
}

TEST(CompileBudgetTest, PassedDeadlineAndCancelFlagStopTheCompile) {
  ConstraintLimits limits;
  CompileBudget late(limits.max_compile_steps);
  late.set_deadline(CompileBudget::Clock::now() - std::chrono::seconds(1));
  auto compiled = CompileConstraint(Regex("[a-z]{1,100}"), limits, &late);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(compiled.status().message().find("deadline"), std::string_view::npos);

  std::atomic<bool> cancelled{true};
  CompileBudget cancel(limits.max_compile_steps);
  cancel.set_cancel_flag(&cancelled);
  compiled = CompileConstraint(Regex("[a-z]{1,100}"), limits, &cancel);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kCancelled);

  cancelled = false;
  CompileBudget go_on(limits.max_compile_steps);
  go_on.set_cancel_flag(&cancelled);
  go_on.set_deadline(CompileBudget::Clock::now() + std::chrono::hours(1));
  EXPECT_TRUE(CompileConstraint(Regex("[a-z]{1,100}"), limits, &go_on).ok());
}

TEST(CompileBudgetTest, NestedStarsBuildTheirBodyOnce) {
  // 16 nested stars used to build 2^16 copies of `b` (10-13 s).
  std::string text = "b";
  for (int i = 0; i < 16; ++i) {
    text += "*";
    StatusOr<Grammar> grammar = RegexToGrammar(text, ConstraintLimits());
    ASSERT_TRUE(grammar.ok());
    CompileBudget budget(ConstraintLimits().max_compile_steps);
    StatusOr<Nfa> nfa = BuildNfa(*grammar, ConstraintLimits(), &budget);
    ASSERT_TRUE(nfa.ok());
    EXPECT_LT(nfa->nodes.size(), 8u * (i + 2)) << text;
  }
}

// body (separator body)* with min 0..3 and no max: what each accepts is unchanged by
// building the body once.
TEST(CompileBudgetTest, UnboundedSeparatedRepeatsKeepTheirMeaning) {
  for (int32_t min = 0; min <= 3; ++min) {
    Grammar g;
    RuleId root = g.AddRule("root");
    g.SetBody(root, g.SepRepeat(g.Byte('a'), g.Byte(','), min, kUnbounded));
    g.set_root(root);
    StatusOr<std::shared_ptr<const CompiledGrammar>> compiled = CompileGrammar(g, ConstraintLimits());
    ASSERT_TRUE(compiled.ok());
    std::string text;
    for (int32_t n = 0; n <= 5; ++n) {
      if (n > 0) text += n == 1 ? "a" : ",a";
      Matcher matcher(*compiled);
      ASSERT_TRUE(matcher.AcceptBytes(text)) << text;
      EXPECT_EQ(matcher.CanEnd(), n >= min) << "min " << min << ": " << text;
      EXPECT_FALSE(matcher.AcceptBytes(n == 0 ? "," : "a")) << text;
    }
  }
  for (const char* ok : {"(ab)+", "((a|b)*c)*", "(a*)*", "x{2,}"}) {
    StatusOr<std::shared_ptr<const CompiledGrammar>> compiled = CompileConstraint(Regex(ok), ConstraintLimits());
    ASSERT_TRUE(compiled.ok()) << ok;
    EXPECT_FALSE(Matcher(*compiled).AcceptBytes("d")) << ok;
  }
  StatusOr<std::shared_ptr<const CompiledGrammar>> two = CompileConstraint(Regex("x{2,}"), ConstraintLimits());
  ASSERT_TRUE(two.ok());
  Matcher m(*two);
  ASSERT_TRUE(m.Accept('x'));
  EXPECT_FALSE(m.CanEnd());
  ASSERT_TRUE(m.AcceptBytes("xxx"));
  EXPECT_TRUE(m.CanEnd());
}

}  // namespace
}  // namespace surge
