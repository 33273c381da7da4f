// obs/exposition.h: the one Prometheus text reader, against what the registry writes and
// against the lines engines and hostile peers send.
#include "obs/exposition.h"

#include <gtest/gtest.h>

#include <cmath>

#include "obs/metrics.h"

namespace surge::obs {
namespace {

TEST(ExpositionReaderTest, ReadsBackWhatTheRegistryWrites) {
  Registry registry;
  registry.AddCounterFamily("req_total", "Requests.", {"code", "path"}).WithLabels({"200", "/a\"b\\c"}).Increment(5);
  registry.AddHistogram("e2e_seconds", "E2E.", {0.5, 1}).Observe(0.7);
  registry.AddGauge("kv_usage_ratio", "KV.").Set(0.125);
  StatusOr<Exposition> e = ParseExposition(registry.Expose());
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->types.at("req_total"), "counter");
  EXPECT_EQ(e->types.at("e2e_seconds"), "histogram");
  EXPECT_EQ(e->types.at("kv_usage_ratio"), "gauge");
  std::map<std::string, double> by_series;
  for (const Sample& s : e->samples) by_series[s.name + (s.labels.count("le") ? s.labels.at("le") : "")] = s.value;
  EXPECT_EQ(by_series.at("e2e_seconds_bucket0.5"), 0);
  EXPECT_EQ(by_series.at("e2e_seconds_bucket1"), 1);
  EXPECT_EQ(by_series.at("e2e_seconds_bucket+Inf"), 1);
  EXPECT_EQ(by_series.at("e2e_seconds_count"), 1);
  EXPECT_EQ(by_series.at("kv_usage_ratio"), 0.125);
  for (const Sample& s : e->samples) {
    if (s.name == "req_total") {
      EXPECT_EQ(s.labels.at("path"), "/a\"b\\c");  // unescaped
    }
  }
}

TEST(ExpositionReaderTest, ValuesTimestampsAndLineEnds) {
  Sample s;
  ASSERT_TRUE(ParseSampleLine("vllm:num_requests_running{model_name=\"m\"} 4.0 1700000000000", &s));
  EXPECT_EQ(s.name, "vllm:num_requests_running");
  EXPECT_EQ(s.labels.at("model_name"), "m");
  EXPECT_EQ(s.value, 4);
  ASSERT_TRUE(ParseSampleLine("x 1e999", &s));
  EXPECT_TRUE(std::isinf(s.value) && s.value > 0);  // out of range reads as strtod reads it
  ASSERT_TRUE(ParseSampleLine("x 1e-999", &s));
  EXPECT_EQ(s.value, 0);
  ASSERT_TRUE(ParseSampleLine("x nan", &s));
  EXPECT_TRUE(std::isnan(s.value));
  ASSERT_TRUE(ParseSampleLine("x +Inf", &s));
  EXPECT_TRUE(std::isinf(s.value));
  EXPECT_TRUE(s.labels.empty());  // nothing left from the line before
  StatusOr<Exposition> crlf = ParseExposition("# TYPE a gauge\r\na 2\r\n");
  ASSERT_TRUE(crlf.ok()) << crlf.status().message();
  EXPECT_EQ(crlf->samples.at(0).value, 2);
  for (const char* bad : {"", "1x 2", "x", "x 1abc", "x{a=\"b\" 1", "x{a=b} 1", "{a=\"b\"} 1"}) {
    EXPECT_FALSE(ParseSampleLine(bad, &s)) << bad;
  }
}

TEST(ExpositionReaderTest, StrictRefusesWhatVisitSkips) {
  const std::string text = "# HELP a x\na 1\nnot a sample\n\nb{l=\"v\"} 2\nc 3\n";
  StatusOr<Exposition> strict = ParseExposition(text);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("line 3"), std::string::npos) << strict.status().message();
  std::vector<std::string> seen;
  Status status = VisitSamples(text, [&](const Sample& s) {
    seen.push_back(s.name);
    return s.name == "b" ? InvalidArgumentError("stop at b") : OkStatus();
  });
  EXPECT_EQ(status.message(), "stop at b");
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));  // c never visited
}

}  // namespace
}  // namespace surge::obs
