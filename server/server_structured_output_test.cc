// response_format and guided_* through the server: each reaches the engine compiled (one
// CompiledGrammar per distinct constraint), and a constraint the compiler refuses is a 400
// naming the field, in the compiler's words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/constraint/constraint.h"
#include "server/constraint_cache.h"
#include "server/server_test_util.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using testing_util::Delta;
using testing_util::FakeEngine;

class StructuredOutputServerTest : public testing_util::FakeServerTest {
 protected:
  void SetUp() override { StartServer(testing_util::StoriesTokenizer(), testing_util::FakeServerOptions()); }

  // Posts a completion, answers it, and returns the request the engine saw.
  EngineRequest Submitted(const std::string& body) {
    const size_t index = engine_.num_submitted();
    auto reply = std::async(std::launch::async, [&] { return Post("/v1/completions", body); });
    EXPECT_TRUE(engine_.WaitForSubmitted(index + 1));
    EngineRequest request = engine_.submitted(index).request;
    engine_.Emit(index, Delta(0, "{}", {5}, FinishReason::kStop, /*finished=*/true));
    EXPECT_EQ(reply.get().status, 200);
    return request;
  }

  void ExpectError(const std::string& path, const std::string& body, const std::string& param,
                   const std::string& message) {
    net::HttpResponse response = Post(path, body);
    EXPECT_EQ(response.status, 400) << body;
    json error = json::parse(response.body)["error"];
    EXPECT_EQ(error["param"], param) << body;
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr(message)) << body;
  }
};

TEST_F(StructuredOutputServerTest, ConstraintsReachTheEngineCompiledAndCached) {
  engine_.Refuse(OkStatus());
  EXPECT_EQ(Submitted(R"({"prompt": "x"})").constraint, nullptr);
  EXPECT_EQ(Submitted(R"({"prompt": "x", "response_format": {"type": "text"}})").constraint, nullptr);
  const std::string schema = R"({"prompt": "x", "guided_json": {"type": "object", "properties": {"a": {"type": "integer"}}}})";
  EngineRequest first = Submitted(schema);
  ASSERT_NE(first.constraint, nullptr);
  EXPECT_EQ(first.constraint_start_token_id, -1);
  EXPECT_EQ(Submitted(schema).constraint, first.constraint) << "the second request hits the cache";
  for (const char* field : {R"("guided_regex": "[0-9]+")", R"("guided_choice": ["a", "b"])",
                            R"("guided_grammar": "root ::= \"x\"+")", R"("response_format": {"type": "json_object"})"}) {
    EXPECT_NE(Submitted(std::string(R"({"prompt": "x", )") + field + "}").constraint, nullptr) << field;
  }
  // One compiled grammar for every prompt of a batch.
  const size_t index = engine_.num_submitted();
  auto reply = std::async(std::launch::async, [&] {
    return Post("/v1/completions", R"({"prompt": ["x", "y"], "guided_regex": "[0-9]+"})");
  });
  ASSERT_TRUE(engine_.WaitForSubmitted(index + 2));
  EXPECT_EQ(engine_.submitted(index).request.constraint, engine_.submitted(index + 1).request.constraint);
  EXPECT_NE(engine_.submitted(index).request.constraint, nullptr);
  engine_.Emit(index, Delta(0, "1", {5}, FinishReason::kStop, true));
  engine_.Emit(index + 1, Delta(0, "2", {5}, FinishReason::kStop, true));
  EXPECT_EQ(reply.get().status, 200);
}

TEST_F(StructuredOutputServerTest, CompileErrorsNameTheField) {
  ExpectError("/v1/completions", R"({"prompt": "x", "guided_json": {"type": "object", "patternProperties": {}}})",
              "guided_json", "keyword 'patternProperties' is not supported");
  ExpectError("/v1/completions", R"({"prompt": "x", "guided_json": "{not json"})", "guided_json", "");
  ExpectError("/v1/completions", R"({"prompt": "x", "guided_regex": "(a"})", "guided_regex", "");
  ExpectError("/v1/completions", R"({"prompt": "x", "guided_regex": "(?=a)b"})", "guided_regex", "lookaround");
  ExpectError("/v1/completions", R"({"prompt": "x", "guided_grammar": "rot ::= \"a\""})", "guided_grammar", "root");
  ExpectError("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}],
      "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "string",
      "format": "uri"}}}})", "response_format", "format");
  ExpectError("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}],
      "response_format": {"type": "xml"}})", "response_format", "must be one of text, json_object, json_schema");
  ExpectError("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}],
      "guided_json": {}, "guided_regex": "a"})", "guided_regex", "at most one output constraint");
  EXPECT_EQ(engine_.num_submitted(), 0u);
}

ConstraintSpec RegexSpec(const std::string& regex) { return ConstraintSpec{ConstraintKind::kRegex, regex, {}}; }

TEST(ConstraintCacheTest, BoundedLeastRecentlyUsed) {
  ConstraintCache cache(ConstraintCacheOptions{2});
  auto spec = RegexSpec;
  auto a = *cache.Get(spec("a"));
  auto b = *cache.Get(spec("b"));
  EXPECT_EQ(*cache.Get(spec("a")), a);  // a is now the most recent
  auto c = *cache.Get(spec("c"));       // drops b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(*cache.Get(spec("a")), a);
  EXPECT_NE(*cache.Get(spec("b")), b);  // compiled again
  EXPECT_FALSE(cache.Get(spec("(")).ok());
  EXPECT_EQ(cache.size(), 2u);
}

TEST(ConstraintCacheTest, BoundedInBytes) {
  // Each .{1000} grammar holds ~19k states of tables; the bound keeps about two of them.
  auto probe = *CompileConstraint(RegexSpec(".{1000}"), ConstraintLimits());
  const int64_t one = probe->memory_bytes();
  ConstraintCache cache(ConstraintCacheOptions{256, 2 * one + one / 2});
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(cache.Get(RegexSpec(".{" + std::to_string(1000 + i) + "}")).ok());
    EXPECT_LE(cache.bytes(), 2 * one + one / 2);
  }
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Lookup(RegexSpec(".{1005}")).has_value()) << "the most recent stays";
  EXPECT_FALSE(cache.Lookup(RegexSpec(".{1000}")).has_value());
  // One larger than the whole bound is returned but not kept.
  ConstraintCache tiny(ConstraintCacheOptions{256, one / 2});
  EXPECT_TRUE(tiny.Get(RegexSpec(".{1000}")).ok());
  EXPECT_EQ(tiny.size(), 0u);
  EXPECT_EQ(tiny.bytes(), 0);
}

TEST(ConstraintCacheTest, FailuresAreKeptButNotDeadlinesOrCancels) {
  ConstraintCache cache;
  EXPECT_FALSE(cache.Get(RegexSpec("a?{1000}{8}")).ok());
  EXPECT_EQ(cache.failures_cached(), 1);
  std::optional<ConstraintCache::Compiled> again = cache.Lookup(RegexSpec("a?{1000}{8}"));
  ASSERT_TRUE(again.has_value()) << "a repeated bad grammar is not compiled again";
  EXPECT_EQ(again->status().code(), StatusCode::kResourceExhausted);

  CompileBudget late(ConstraintLimits().max_compile_steps);
  late.set_deadline(CompileBudget::Clock::now() - std::chrono::seconds(1));
  EXPECT_EQ(cache.Compile(RegexSpec("[0-9]+"), &late).status().code(), StatusCode::kDeadlineExceeded);
  std::atomic<bool> cancelled{true};
  CompileBudget cancel(ConstraintLimits().max_compile_steps);
  cancel.set_cancel_flag(&cancelled);
  EXPECT_EQ(cache.Compile(RegexSpec("[0-9]+"), &cancel).status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(cache.Lookup(RegexSpec("[0-9]+")).has_value());
  EXPECT_EQ(cache.failures_cached(), 1);
  EXPECT_TRUE(cache.Get(RegexSpec("[0-9]+")).ok());
}

TEST(ConstraintCacheTest, IdenticalCompilesInFlightRunOnce) {
  // Eight requests with the same costly bad grammar at once: one compile, eight answers.
  ConstraintCache cache;
  std::vector<std::future<std::pair<ConstraintCache::Compiled, bool>>> answers;
  for (int i = 0; i < 8; ++i) {
    answers.push_back(std::async(std::launch::async, [&cache] {
      CompileBudget budget(cache.limits().max_compile_steps);
      bool joined = false;
      ConstraintCache::Compiled compiled = cache.Compile(RegexSpec("a?{1000}{4}"), &budget, &joined);
      return std::make_pair(std::move(compiled), joined);
    }));
  }
  int num_joined = 0;
  for (auto& answer : answers) {
    auto [compiled, joined] = answer.get();
    EXPECT_EQ(compiled.status().code(), StatusCode::kResourceExhausted);
    num_joined += joined ? 1 : 0;
  }
  EXPECT_EQ(cache.compiles(), 1);
  EXPECT_LE(num_joined, 7);
  EXPECT_EQ(cache.failures_cached(), 1);
}

}  // namespace
}  // namespace surge
