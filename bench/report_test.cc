// The reporters on a hand-made report: every metric in the JSON, ratios with --compare,
// CSV rows, console columns, and an HTML page whose data cannot break out of its script.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/console_report.h"
#include "bench/csv_report.h"
#include "bench/html_report.h"
#include "bench/json_report.h"

namespace surge::bench {
namespace {

using Json = nlohmann::json;

RoundMetrics Round(std::string label, LoadPoint point, double ttft_ms, double rps) {
  RoundRun run;
  run.wall_s = 1;
  for (int i = 0; i < 4; ++i) {
    RequestRecord r;
    r.ttft_s = ttft_ms / 1e3;
    r.latency_s = ttft_ms / 1e3 + 0.1;
    r.output_tokens = 5;
    r.prompt_tokens = 3;
    r.itl_s = {0.025, 0.025, 0.025, 0.025};
    run.records.push_back(r);
  }
  run.records.push_back(RequestRecord{.error_kind = "http_503", .error_message = "overloaded"});
  SloConfig slo;
  slo.ttft_ms = 100;
  RoundMetrics m = Aggregate(std::span<const RoundRun>(&run, 1), slo);
  m.request_throughput = rps;
  m.target_label = std::move(label);
  m.url = "http://127.0.0.1:1";
  m.model = "</script><b>model";
  m.point = point;
  return m;
}

BenchReport CompareReport() {
  BenchReport report;
  report.config.urls = {"http://127.0.0.1:1", "http://127.0.0.1:2"};
  report.config.points = {{1, 0}, {4, 0}};
  report.config.slo.ttft_ms = 100;
  report.targets = {{"A", "http://127.0.0.1:1", "m"}, {"B", "http://127.0.0.1:2", "m"}};
  report.rounds = {Round("A", {1, 0}, 50, 2), Round("B", {1, 0}, 100, 1), Round("A", {4, 0}, 80, 6),
                   Round("B", {4, 0}, 40, 3)};
  report.started_at = "2025-01-01T00:00:00Z";
  return report;
}

TEST(ReportTest, JsonHoldsEveryMetricAndTheRatios) {
  Json root = Json::parse(JsonReport(CompareReport()));
  EXPECT_EQ(root["config"]["compare"], true);
  EXPECT_EQ(root["config"]["slo"]["ttft_ms"], 100.0);
  ASSERT_EQ(root["rounds"].size(), 4u);
  const Json& round = root["rounds"][0];
  for (const char* key : {"request_throughput", "input_token_throughput", "output_token_throughput", "goodput",
                          "ttft_ms", "tpot_ms", "itl_ms", "e2e_latency_ms", "errors", "duration_s", "completed",
                          "failed", "ttft_quantiles_ms", "itl_quantiles_ms", "client_cpu_us_per_request"}) {
    EXPECT_TRUE(round.contains(key)) << key;
  }
  for (const char* stat : {"mean", "median", "p90", "p95", "p99", "max"}) {
    EXPECT_TRUE(round["ttft_ms"][stat].is_number()) << stat;
  }
  EXPECT_EQ(round["errors"]["http_503"], 1);
  EXPECT_EQ(round["concurrency"], 1);
  EXPECT_TRUE(round["request_rate"].is_null());
  EXPECT_NEAR(round["itl_ms"]["mean"].get<double>(), 25, 1e-9);
  ASSERT_EQ(root["comparisons"].size(), 2u);
  EXPECT_NEAR(root["comparisons"][0]["ratio"]["ttft_mean_ms"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(root["comparisons"][1]["ratio"]["request_throughput"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(root["comparisons"][1]["point"], "c=4");
}

TEST(ReportTest, CsvHasOneRowPerRoundAndRatioRows) {
  std::string csv = CsvReport(CompareReport());
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = csv.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(csv.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 1u + 6u);  // header, then A, B, A/B for each of two points
  EXPECT_EQ(lines[0].rfind("target,url,model,point,concurrency,request_rate,request_throughput", 0), 0u);
  EXPECT_EQ(lines[1].rfind("A,", 0), 0u);
  EXPECT_EQ(lines[3].rfind("A/B,", 0), 0u);
  EXPECT_NE(lines[1].find("http_503:1"), std::string::npos);
  const size_t num_columns = std::count(lines[0].begin(), lines[0].end(), ',');
  for (const std::string& line : lines) EXPECT_EQ(static_cast<size_t>(std::count(line.begin(), line.end(), ',')), num_columns) << line;
}

TEST(ReportTest, ConsoleTableHasTheColumns) {
  std::string table = ConsoleReport(CompareReport());
  for (const char* column : {"point", "mean TTFT ms", "P95 TTFT ms", "mean TPOT ms", "mean latency ms", "req/s",
                             "output tok/s", "goodput req/s", "errors"}) {
    EXPECT_NE(table.find(column), std::string::npos) << column;
  }
  EXPECT_NE(table.find("A/B"), std::string::npos);
  EXPECT_NE(table.find("0.50x"), std::string::npos);  // TTFT A/B at c=1
  EXPECT_NE(table.find("http_503 x1 (overloaded)"), std::string::npos);
}

TEST(ReportTest, HtmlIsSelfContainedAndEscaped) {
  std::string html = HtmlReport(CompareReport());
  EXPECT_EQ(html.find(kHtmlDataPlaceholder), std::string::npos);
  EXPECT_EQ(html.find("</script><b>"), std::string::npos);  // the model name stays inside the JSON
  EXPECT_NE(html.find("\\u003c/script>\\u003cb>model"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg"), html.rfind("http://www.w3.org/2000/svg"));  // the SVG namespace only
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  size_t start = html.find("<script id=\"report-data\" type=\"application/json\">");
  ASSERT_NE(start, std::string::npos);
  start = html.find('>', start) + 1;
  Json data = Json::parse(html.substr(start, html.find("</script>", start) - start));
  EXPECT_EQ(data["rounds"].size(), 4u);
  EXPECT_EQ(data["rounds"][0]["model"], "</script><b>model");
}

}  // namespace
}  // namespace surge::bench
