#include <gtest/gtest.h>

#include "engine/constraint/constraint_test_util.h"

namespace surge::testing {
namespace {

// Random schemas; random token walks under their masks must give JSON that parses and
// validates (or, cut off by the length bound, a live prefix).
void WalkSchemas(const std::string& vocabulary_name, int num_schemas, int walks_per_schema,
                 int max_tokens) {
  const TokenVocabulary* v = TestVocabulary(vocabulary_name);
  if (v == nullptr) GTEST_SKIP() << vocabulary_name << " vocabulary not found";
  std::mt19937_64 rng(1234);
  int ended_count = 0, total = 0;
  for (int i = 0; i < num_schemas; ++i) {
    Json schema = RandomSchema(rng, 3);
    if (i % 5 == 0) {  // through $defs and $ref
      schema = Json{{"$defs", {{"d", schema}}}, {"type", "object"},
                    {"properties", {{"x", {{"$ref", "#/$defs/d"}}}}}, {"required", {"x"}}};
    }
    auto g = MustCompileSchema(schema.dump());
    ASSERT_NE(g, nullptr) << schema.dump();
    for (int w = 0; w < walks_per_schema; ++w) {
      bool ended = false;
      std::string out = RandomWalk(g, *v, rng, max_tokens, &ended);
      ++total;
      if (!ended) continue;
      ++ended_count;
      Json value = Json::parse(out, nullptr, false);
      ASSERT_FALSE(value.is_discarded()) << "does not parse: " << out << "\nschema " << schema.dump();
      std::string why;
      ASSERT_TRUE(ValidateJson(schema, schema, value, &why))
          << why << ": " << out << "\nschema " << schema.dump();
      // Mutations the matcher accepts must still be valid (the grammar is sound).
      for (int k = 0; k < 5 && !out.empty(); ++k) {
        std::string mutated = out;
        size_t at = rng() % mutated.size();
        if (k % 2) mutated.erase(at, 1); else mutated[at] = "\"{}[],:0a \\"[rng() % 11];
        if (!Matches(g, mutated)) continue;
        Json m = Json::parse(mutated, nullptr, false);
        ASSERT_FALSE(m.is_discarded()) << mutated;
        ASSERT_TRUE(ValidateJson(schema, schema, m, &why)) << why << ": " << mutated;
      }
    }
  }
  EXPECT_GT(ended_count, total / 2) << "too few walks ended";
}

TEST(RandomWalkTest, SchemasWithTinyVocabulary) { WalkSchemas("tiny", 300, 3, 400); }
TEST(RandomWalkTest, SchemasWithStories260K) { WalkSchemas("stories", 300, 2, 400); }
TEST(RandomWalkTest, SchemasWithLlama3) { WalkSchemas("llama3", 30, 1, 200); }

TEST(RandomWalkTest, JsonObjectWalksParse) {
  const TokenVocabulary* v = TestVocabulary("stories");
  ASSERT_NE(v, nullptr);
  auto g = MustCompile({ConstraintKind::kJsonObject, "", {}});
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i) {
    bool ended = false;
    std::string out = RandomWalk(g, *v, rng, 400, &ended);
    if (!ended) continue;
    Json value = Json::parse(out, nullptr, false);
    ASSERT_FALSE(value.is_discarded()) << out;
    EXPECT_TRUE(value.is_object());
  }
}

}  // namespace
}  // namespace surge::testing
