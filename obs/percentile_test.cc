#include "obs/percentile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace surge::obs {
namespace {

TEST(PercentileTest, InterpolatesBetweenRanks) {
  std::vector<double> samples = {4, 1, 3, 2};
  EXPECT_EQ(Percentile(samples, 0.0), 1);
  EXPECT_EQ(Percentile(samples, 1.0), 4);
  EXPECT_EQ(Percentile(samples, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile(samples, 0.95), 3.85);
  EXPECT_TRUE(std::isnan(Percentile({}, 0.5)));
  EXPECT_EQ(Percentile(std::vector<double>{7}, 0.99), 7);
}

TEST(PercentileTest, WindowKeepsTheMostRecentSamples) {
  SampleWindow window(3);
  EXPECT_EQ(window.size(), 0u);
  for (double v : {1, 2, 3, 4, 5}) window.Add(v);
  EXPECT_EQ(window.Snapshot(), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(window.Percentile(0.5), 4);
}

TEST(PercentileTest, WindowIsThreadSafe) {
  SampleWindow window(1000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) window.Add(i);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(window.size(), 1000u);
}

}  // namespace
}  // namespace surge::obs
