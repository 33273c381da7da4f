#include "obs/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

namespace surge::obs {
namespace {

TEST(MetricsTest, ExposesExactText) {
  Registry registry;
  Counter& requests = registry.AddCounter("surge_requests_total", "Requests served.");
  GaugeFamily& running = registry.AddGaugeFamily("surge_running", "Running requests.", {"model"});
  Histogram& ttft = registry.AddHistogram("surge_ttft_seconds", "Time to first token.", {0.1, 0.5});
  requests.Increment();
  requests.Increment(2);
  running.WithLabels({"llama"}).Set(3);
  running.WithLabels({"deepseek"}).Set(1.5);
  ttft.Observe(0.05);
  ttft.Observe(0.1);  // bounds are inclusive
  ttft.Observe(7);
  EXPECT_EQ(registry.Expose(),
            "# HELP surge_requests_total Requests served.\n"
            "# TYPE surge_requests_total counter\n"
            "surge_requests_total 3\n"
            "# HELP surge_running Running requests.\n"
            "# TYPE surge_running gauge\n"
            "surge_running{model=\"deepseek\"} 1.5\n"
            "surge_running{model=\"llama\"} 3\n"
            "# HELP surge_ttft_seconds Time to first token.\n"
            "# TYPE surge_ttft_seconds histogram\n"
            "surge_ttft_seconds_bucket{le=\"0.1\"} 2\n"
            "surge_ttft_seconds_bucket{le=\"0.5\"} 2\n"
            "surge_ttft_seconds_bucket{le=\"+Inf\"} 3\n"
            "surge_ttft_seconds_sum 7.15\n"
            "surge_ttft_seconds_count 3\n");
}

TEST(MetricsTest, LabelledHistogramPutsLeLast) {
  Registry registry;
  HistogramFamily& latency =
      registry.AddHistogramFamily("lat_seconds", "Latency.", {"route", "code"}, {1});
  latency.WithLabels({"/v1/completions", "200"}).Observe(0.5);
  std::string text = registry.Expose();
  EXPECT_NE(text.find("lat_seconds_bucket{route=\"/v1/completions\",code=\"200\",le=\"1\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lat_seconds_sum{route=\"/v1/completions\",code=\"200\"} 0.5\n"),
            std::string::npos);
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeHelp("line1\nback\\slash \"quoted\""), "line1\\nback\\\\slash \"quoted\"");
  Registry registry;
  registry.AddCounterFamily("errors_total", "Errors\nby cause.", {"cause"})
      .WithLabels({"say \"no\"\n"})
      .Increment();
  EXPECT_EQ(registry.Expose(),
            "# HELP errors_total Errors\\nby cause.\n"
            "# TYPE errors_total counter\n"
            "errors_total{cause=\"say \\\"no\\\"\\n\"} 1\n");
}

TEST(MetricsTest, FormatsSpecialValues) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(100000), "100000");
  EXPECT_EQ(FormatSampleValue(0.25), "0.25");
  EXPECT_EQ(FormatSampleValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatSampleValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatSampleValue(NAN), "NaN");
  EXPECT_EQ(FormatSampleValue(1e300), "1e+300");
}

TEST(MetricsTest, ConcurrentUpdatesSumExactly) {
  Registry registry;
  CounterFamily& tokens = registry.AddCounterFamily("tokens_total", "Tokens.", {"kind"});
  Histogram& histogram = registry.AddHistogram("h", "H.", LinearBuckets(0, 10, 10));
  Gauge& gauge = registry.AddGauge("g", "G.");
  constexpr int kNumThreads = 8;
  constexpr int kNumIncrements = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kNumThreads; ++t) {
    threads.emplace_back([&, t] {
      Counter& counter = tokens.WithLabels({t % 2 == 0 ? "in" : "out"});
      for (int i = 0; i < kNumIncrements; ++i) {
        counter.Increment();
        histogram.Observe(i % 100);
        gauge.Increment();
        gauge.Decrement();
        if (i % 1000 == 0) (void)registry.Expose();  // readers race with writers
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(tokens.WithLabels({"in"}).value(), kNumThreads / 2 * kNumIncrements);
  EXPECT_EQ(tokens.WithLabels({"out"}).value(), kNumThreads / 2 * kNumIncrements);
  Histogram::Snapshot snapshot = histogram.Read();
  EXPECT_EQ(snapshot.count, uint64_t{kNumThreads} * kNumIncrements);
  EXPECT_EQ(snapshot.sum, 49.5 * kNumThreads * kNumIncrements);
  EXPECT_EQ(gauge.value(), 0);
}

TEST(MetricsTest, WithLabelsReturnsTheSameChild) {
  Registry registry;
  CounterFamily& family = registry.AddCounterFamily("c_total", "C.", {"a", "b"});
  EXPECT_EQ(&family.WithLabels({"x", "y"}), &family.WithLabels({"x", "y"}));
  EXPECT_NE(&family.WithLabels({"x", "y"}), &family.WithLabels({"y", "x"}));
}

TEST(MetricsDeathTest, RejectsMisuse) {
  Registry registry;
  registry.AddCounter("c_total", "C.");
  EXPECT_DEATH(registry.AddGauge("c_total", "again"), "registered twice");
  EXPECT_DEATH(registry.AddGauge("bad-name", "x"), "bad metric name");
  EXPECT_DEATH(registry.AddHistogramFamily("h", "x", {"le"}, {1}), "reserved");
  EXPECT_DEATH(registry.AddHistogram("h", "x", {2, 1}), "increase");
  CounterFamily& family = registry.AddCounterFamily("f_total", "F.", {"a"});
  EXPECT_DEATH(family.WithLabels({"x", "y"}), "takes 1 label values");
}

// Parses exposition text back with the 0.0.4 line grammar and checks what a scraper
// relies on: every sample belongs to a declared family, histogram buckets are cumulative
// and end with +Inf equal to _count.
struct ParsedSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value;
};

std::vector<ParsedSample> ParseExposition(const std::string& text, std::map<std::string, std::string>* types) {
  static const std::regex kComment(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$)");
  static const std::regex kSample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? ([^ ]+)$)");
  static const std::regex kLabel(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\[\\"n])*)")re");
  std::vector<ParsedSample> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_match(line, match, kComment)) {
      if (match[1] == "TYPE") (*types)[match[2]] = match[3];
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, match, kSample)) << "bad line: " << line;
    if (match.empty()) continue;
    ParsedSample sample{match[1], {}, std::stod(match[4] == "+Inf" ? "inf" : match[4].str())};
    std::string labels = match[3];
    for (std::sregex_iterator it(labels.begin(), labels.end(), kLabel), end; it != end; ++it) {
      sample.labels[(*it)[1]] = (*it)[2];
    }
    samples.push_back(sample);
  }
  return samples;
}

TEST(MetricsTest, ExpositionParsesBack) {
  Registry registry;
  registry.AddCounterFamily("req_total", "Requests.", {"code", "path"})
      .WithLabels({"200", "/a\"b\\c\nd"})
      .Increment(5);
  HistogramFamily& family =
      registry.AddHistogramFamily("e2e_seconds", "E2E.", {"model"}, ExponentialBuckets(0.001, 2, 12));
  for (int i = 0; i < 100; ++i) family.WithLabels({i % 3 == 0 ? "a" : "b"}).Observe(i * 0.003);
  registry.AddGauge("kv_usage_ratio", "KV.").Set(0.125);

  std::map<std::string, std::string> types;
  std::vector<ParsedSample> samples = ParseExposition(registry.Expose(), &types);
  EXPECT_EQ(types["req_total"], "counter");
  EXPECT_EQ(types["e2e_seconds"], "histogram");
  EXPECT_EQ(types["kv_usage_ratio"], "gauge");
  std::map<std::string, double> last_bucket, count;
  for (const ParsedSample& s : samples) {
    std::string family_name = std::regex_replace(s.name, std::regex("_(bucket|sum|count)$"), "");
    EXPECT_TRUE(types.count(s.name) || types.count(family_name)) << s.name;
    if (s.name == "req_total") {
      EXPECT_EQ(s.labels.at("path"), "/a\\\"b\\\\c\\nd");
    }
    if (s.name == "e2e_seconds_bucket") {
      const std::string& model = s.labels.at("model");
      EXPECT_GE(s.value, last_bucket[model]);  // cumulative
      last_bucket[model] = s.value;
      if (s.labels.at("le") == "+Inf") count[model] = s.value;
    }
    if (s.name == "e2e_seconds_count") {
      EXPECT_EQ(s.value, count[s.labels.at("model")]);
    }
  }
  EXPECT_EQ(count["a"] + count["b"], 100);
}

// Counts kept elsewhere (the engine's step sizes) merge into the same buckets as Observe.
TEST(MetricsTest, AddCountsMergesIntoBuckets) {
  Registry registry;
  Histogram& sizes = registry.AddHistogram("step_tokens", "Tokens per step.", {1, 4});
  sizes.Observe(3);
  const uint64_t counts[] = {2, 0, 1};  // two 1s and one 9
  sizes.AddCounts(counts, 11);
  Histogram::Snapshot snapshot = sizes.Read();
  EXPECT_EQ(snapshot.cumulative_counts, (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(snapshot.sum, 14);
  EXPECT_EQ(snapshot.count, 4u);
}

TEST(MetricsTest, RequestLatencyBucketsSpanTenMillisecondsToAMinute) {
  const std::vector<double> bounds = RequestLatencyBuckets();
  EXPECT_EQ(bounds.front(), 0.005);
  EXPECT_EQ(bounds.back(), 120);
  EXPECT_TRUE(std::is_sorted(bounds.begin(), bounds.end()));
  EXPECT_EQ(bounds.size(), 29u);
  Registry registry;
  registry.AddHistogram("latency_seconds", "Latency.", bounds);  // valid: strictly increasing
}

}  // namespace
}  // namespace surge::obs
