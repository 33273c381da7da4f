// The memory backend's bounds (bytes, entries: LRU order) and expiry on an injected clock.
#include "router/cache/memory_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace surge::router {
namespace {

struct Fixture {
  int64_t now_ms = 1'000;
  std::vector<std::string> evicted;  // "scope:reason"
  MemoryCache Make(int64_t max_bytes, int64_t max_entries) {
    return MemoryCache({.max_bytes = max_bytes, .max_entries = max_entries, .now_ms = [this] { return now_ms; },
                        .on_evict = [this](const std::string& scope, const char* reason) {
                          evicted.push_back(scope + ":" + reason);
                        }});
  }
};

std::optional<std::string> Get(MemoryCache& cache, const CacheKey& key) {
  std::optional<std::string> value;
  cache.Get(key, [&](CacheLookup lookup) {
    if (lookup.result == CacheLookup::kHit) value = lookup.value;
  });
  return value;
}

void Set(MemoryCache& cache, const CacheKey& key, std::string value, int64_t ttl_s = 60) {
  cache.Set(key, std::move(value), ttl_s, nullptr);
}

TEST(MemoryCacheTest, EntriesBoundEvictsLeastRecentlyUsed) {
  Fixture f;
  MemoryCache cache = f.Make(1 << 20, 2);
  Set(cache, {"t", "a"}, "A");
  Set(cache, {"t", "b"}, "B");
  EXPECT_EQ(Get(cache, {"t", "a"}), "A");  // a is now the most recent
  Set(cache, {"t", "c"}, "C");
  EXPECT_EQ(Get(cache, {"t", "b"}), std::nullopt);
  EXPECT_EQ(Get(cache, {"t", "a"}), "A");
  EXPECT_EQ(Get(cache, {"t", "c"}), "C");
  EXPECT_EQ(f.evicted, std::vector<std::string>{"t:lru"});
  EXPECT_EQ(cache.num_entries(), 2);
}

TEST(MemoryCacheTest, BytesBoundCountsKeysValuesAndOverhead) {
  Fixture f;
  const int64_t one = 1 + 1 + 100 + MemoryCache::kEntryOverheadBytes;  // scope + digest + value + overhead
  MemoryCache cache = f.Make(2 * one + 10, 1000);
  Set(cache, {"t", "a"}, std::string(100, 'x'));
  Set(cache, {"t", "b"}, std::string(100, 'x'));
  EXPECT_EQ(cache.bytes_in_use(), 2 * one);
  Set(cache, {"t", "c"}, std::string(100, 'x'));
  EXPECT_EQ(cache.bytes_in_use(), 2 * one);
  EXPECT_EQ(Get(cache, {"t", "a"}), std::nullopt);
  StoreResult result = StoreResult::kStored;
  cache.Set({"t", "huge"}, std::string(1000, 'x'), 60, [&](StoreResult r) { result = r; });
  EXPECT_EQ(result, StoreResult::kRefused);  // larger than the whole bound: never stored
}

TEST(MemoryCacheTest, EntriesExpireAfterTheirTtl) {
  Fixture f;
  MemoryCache cache = f.Make(1 << 20, 100);
  Set(cache, {"t", "short"}, "S", 1);
  Set(cache, {"t", "long"}, "L", 10);
  f.now_ms += 999;
  EXPECT_EQ(Get(cache, {"t", "short"}), "S");
  f.now_ms += 1;
  EXPECT_EQ(Get(cache, {"t", "short"}), std::nullopt);
  EXPECT_EQ(Get(cache, {"t", "long"}), "L");
  EXPECT_EQ(f.evicted, std::vector<std::string>{"t:ttl"});
}

TEST(MemoryCacheTest, ScopesAreApartAndFlushOneOrAll) {
  Fixture f;
  MemoryCache cache = f.Make(1 << 20, 100);
  Set(cache, {"acme", "k"}, "A");
  Set(cache, {"globex", "k"}, "G");
  EXPECT_EQ(Get(cache, {"acme", "k"}), "A");
  EXPECT_EQ(Get(cache, {"globex", "k"}), "G");
  int64_t dropped = -1;
  cache.Flush("acme", [&](StatusOr<int64_t> n) { dropped = *n; });
  EXPECT_EQ(dropped, 1);
  EXPECT_EQ(Get(cache, {"acme", "k"}), std::nullopt);
  EXPECT_EQ(Get(cache, {"globex", "k"}), "G");
  cache.Flush(std::nullopt, [&](StatusOr<int64_t> n) { dropped = *n; });
  EXPECT_EQ(dropped, 1);
  EXPECT_EQ(cache.bytes_in_use(), 0);
}

}  // namespace
}  // namespace surge::router
