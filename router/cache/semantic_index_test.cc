// SemanticIndex: bounds (LRU across scopes, slot reuse), TTL on an injected clock, scopes
// and flush, HNSW recall against brute force on 50k random vectors, and concurrent
// lookups with inserts.
#include "router/cache/semantic_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

namespace surge::router {
namespace {

const SemanticScope kScope{"acme", "s1"};

std::vector<float> RandomUnitVector(std::mt19937& rng, int dim) {
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<size_t>(dim));
  double sum = 0;
  for (float& x : v) {
    x = normal(rng);
    sum += x * x;
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

SemanticEntry Entry(const std::string& digest, int64_t expires_ms = 1'000'000) {
  return {.text = "text " + digest, .answer_key = {"acme", digest}, .expires_ms = expires_ms};
}

struct Fixture {
  int64_t now_ms = 1'000;
  std::vector<std::string> evicted;  // "tenant:reason"
  SemanticIndexOptions Options(int64_t max_entries) {
    return {.max_entries = max_entries, .initial_capacity = 2, .now_ms = [this] { return now_ms; },
            .on_evict = [this](const std::string& tenant, const char* reason) {
              evicted.push_back(tenant + ":" + reason);
            }};
  }
};

std::string Best(SemanticIndex& index, const SemanticScope& scope, const std::vector<float>& v) {
  std::vector<SemanticMatch> matches = index.Search(scope, v, 1);
  return matches.empty() ? "" : matches.front().answer_key.digest;
}

TEST(SemanticIndexTest, FindsTheNearestAndReportsCosine) {
  Fixture f;
  SemanticIndex index(f.Options(10));
  EXPECT_TRUE(index.Insert(kScope, std::vector<float>{1, 0, 0}, Entry("x")));
  EXPECT_TRUE(index.Insert(kScope, std::vector<float>{0, 2, 0}, Entry("y")));  // normalized on the way in
  std::vector<SemanticMatch> matches = index.Search(kScope, std::vector<float>{3, 4, 0}, 5);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].answer_key.digest, "y");
  EXPECT_NEAR(matches[0].similarity, 0.8, 1e-5);
  EXPECT_NEAR(matches[1].similarity, 0.6, 1e-5);
  EXPECT_EQ(matches[0].text, "text y");
  EXPECT_FALSE(index.Insert(kScope, std::vector<float>{1, 0}, Entry("z")));     // another dimension
  EXPECT_FALSE(index.Insert(kScope, std::vector<float>{0, 0, 0}, Entry("z")));  // no direction
  EXPECT_TRUE(index.Search({"acme", "other"}, std::vector<float>{1, 0, 0}, 1).empty());
  EXPECT_TRUE(index.Search({"other", "s1"}, std::vector<float>{1, 0, 0}, 1).empty());  // tenants apart
}

TEST(SemanticIndexTest, BoundEvictsLeastRecentlyUsedAcrossScopesAndReusesSlots) {
  Fixture f;
  SemanticIndex index(f.Options(3));
  index.Insert(kScope, std::vector<float>{1, 0, 0}, Entry("a"));
  index.Insert(kScope, std::vector<float>{0, 1, 0}, Entry("b"));
  index.Insert({"beta", "s1"}, std::vector<float>{0, 0, 1}, Entry("c"));
  index.Touch(kScope, {"acme", "a"});  // b is now the coldest
  index.Insert(kScope, std::vector<float>{1, 1, 0}, Entry("d"));
  EXPECT_EQ(index.num_entries(), 3);
  EXPECT_EQ(f.evicted, (std::vector<std::string>{"acme:lru"}));
  EXPECT_EQ(Best(index, kScope, {0, 1, 0}), "d");  // b is gone: d is nearest now
  index.Insert(kScope, std::vector<float>{0, 0.5, 1}, Entry("e"));  // evicts beta's c: its scope goes
  EXPECT_EQ(index.num_scopes(), 1);
  EXPECT_EQ(index.num_entries(), 3);
  for (int i = 0; i < 20; ++i) {  // churn through one scope: slots are reused, the bound holds
    std::mt19937 rng(i);
    index.Insert(kScope, RandomUnitVector(rng, 3), Entry("r" + std::to_string(i)));
    ASSERT_EQ(index.num_entries(), 3);
  }
  std::mt19937 rng(19);
  EXPECT_EQ(Best(index, kScope, RandomUnitVector(rng, 3)), "r19");
}

TEST(SemanticIndexTest, SameAnswerKeyReplacesItsVector) {
  Fixture f;
  SemanticIndex index(f.Options(10));
  index.Insert(kScope, std::vector<float>{1, 0, 0}, Entry("a"));
  index.Insert(kScope, std::vector<float>{0, 1, 0}, Entry("a"));
  EXPECT_EQ(index.num_entries(), 1);
  EXPECT_NEAR(index.Search(kScope, std::vector<float>{0, 1, 0}, 3).at(0).similarity, 1.0, 1e-5);
}

TEST(SemanticIndexTest, ExpiredEntriesAreNotFoundAndGoFirstAsTtl) {
  Fixture f;
  SemanticIndex index(f.Options(2));
  index.Insert(kScope, std::vector<float>{1, 0}, Entry("old", 2'000));
  index.Insert(kScope, std::vector<float>{0, 1}, Entry("new", 9'000));
  f.now_ms = 2'000;
  EXPECT_EQ(Best(index, kScope, {1, 0}), "new");
  index.Touch(kScope, {"acme", "new"});
  index.Insert(kScope, std::vector<float>{1, 1}, Entry("third", 9'000));
  EXPECT_EQ(f.evicted, (std::vector<std::string>{"acme:ttl"}));
}

TEST(SemanticIndexTest, FlushDropsOneTenantOrAll) {
  Fixture f;
  SemanticIndex index(f.Options(10));
  index.Insert(kScope, std::vector<float>{1, 0}, Entry("a"));
  index.Insert({"acme", "s2"}, std::vector<float>{1, 0}, Entry("b"));
  index.Insert({"beta", "s1"}, std::vector<float>{1, 0}, Entry("c"));
  EXPECT_EQ(index.Flush("acme"), 2);
  EXPECT_EQ(Best(index, kScope, {1, 0}), "");
  EXPECT_EQ(Best(index, {"beta", "s1"}, {1, 0}), "c");
  EXPECT_EQ(index.Flush(std::nullopt), 1);
  EXPECT_EQ(index.num_entries(), 0);
  EXPECT_TRUE(index.Insert(kScope, std::vector<float>{1, 0}, Entry("a")));  // usable after a flush
}

// Recall of the HNSW search against an exhaustive one. 32 dimensions keep 50k inserts to a
// few seconds on 2 cores; random vectors are the hard case (no cluster structure to lean on).
TEST(SemanticIndexTest, RecallAgainstBruteForceOn50kRandomVectors) {
  constexpr int kDim = 32, kNumVectors = 50'000, kNumQueries = 200, kK = 10;
  SemanticIndex index({.max_entries = kNumVectors, .M = 16, .ef_construction = 64, .ef_search = 128,
                       .initial_capacity = kNumVectors, .now_ms = [] { return int64_t{0}; }, .on_evict = {}});
  std::mt19937 rng(7);
  std::vector<std::vector<float>> data;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kNumVectors; ++i) {
    data.push_back(RandomUnitVector(rng, kDim));
    ASSERT_TRUE(index.Insert(kScope, data.back(), Entry(std::to_string(i))));
  }
  const double insert_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t num_found_at_1 = 0, num_found_at_10 = 0;
  for (int q = 0; q < kNumQueries; ++q) {
    const std::vector<float> query = RandomUnitVector(rng, kDim);
    std::vector<std::pair<float, int>> exact;
    for (int i = 0; i < kNumVectors; ++i) {
      float dot = 0;
      for (int d = 0; d < kDim; ++d) dot += query[d] * data[i][d];
      exact.emplace_back(-dot, i);
    }
    std::partial_sort(exact.begin(), exact.begin() + kK, exact.end());
    std::vector<SemanticMatch> found = index.Search(kScope, query, kK);
    ASSERT_EQ(found.size(), static_cast<size_t>(kK));
    num_found_at_1 += found[0].answer_key.digest == std::to_string(exact[0].second);
    for (int j = 0; j < kK; ++j) {
      num_found_at_10 += std::any_of(found.begin(), found.end(), [&](const SemanticMatch& m) {
        return m.answer_key.digest == std::to_string(exact[j].second);
      });
    }
  }
  const double recall_at_1 = static_cast<double>(num_found_at_1) / kNumQueries;
  const double recall_at_10 = static_cast<double>(num_found_at_10) / (kNumQueries * kK);
  std::printf("HNSW recall on %d random %d-d vectors (M=16, ef_construction=64, ef=128): @1 %.3f, @10 %.3f; "
              "inserts %.2f s\n", kNumVectors, kDim, recall_at_1, recall_at_10, insert_s);
  RecordProperty("recall_at_1", std::to_string(recall_at_1));
  RecordProperty("recall_at_10", std::to_string(recall_at_10));
  EXPECT_GE(recall_at_1, 0.9);
  EXPECT_GE(recall_at_10, 0.85);
}

// Searches on several threads while others insert (and, past the bound, evict and reuse
// slots) in the same scope: every answer found is a live entry's, and the bound holds.
TEST(SemanticIndexTest, ConcurrentLookupsAndInserts) {
  constexpr int kDim = 32, kNumWriters = 3, kNumReaders = 3, kInsertsPerWriter = 1'000;
  SemanticIndex index({.max_entries = 1'000, .now_ms = [] { return int64_t{0}; }, .on_evict = {}});
  std::atomic<bool> writing{true};
  std::atomic<int64_t> num_searches{0}, num_bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kNumWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(w);
      for (int i = 0; i < kInsertsPerWriter; ++i) {
        index.Insert(kScope, RandomUnitVector(rng, kDim), Entry("w" + std::to_string(w) + "-" + std::to_string(i)));
      }
    });
  }
  for (int r = 0; r < kNumReaders; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(100 + r);
      while (writing.load()) {
        for (const SemanticMatch& match : index.Search(kScope, RandomUnitVector(rng, kDim), 5)) {
          if (match.answer_key.digest.empty() || match.text != "text " + match.answer_key.digest) ++num_bad;
        }
        ++num_searches;
      }
    });
  }
  for (int w = 0; w < kNumWriters; ++w) threads[w].join();
  writing = false;
  for (size_t t = kNumWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(num_bad.load(), 0);
  EXPECT_GT(num_searches.load(), 0);
  EXPECT_EQ(index.num_entries(), 1'000);
  std::mt19937 rng(0);
  EXPECT_EQ(index.Search(kScope, RandomUnitVector(rng, kDim), 5).size(), 5u);
}

}  // namespace
}  // namespace surge::router
