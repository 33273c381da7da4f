#include "bench/json_report.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace surge::bench {
namespace {

using Json = nlohmann::json;

Json Number(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }
Json Optional(const std::optional<double>& value) { return value ? Number(*value) : Json(nullptr); }
Json Rate(double rate) { return std::isinf(rate) ? Json("inf") : Json(rate); }

Json PointJson(const LoadPoint& point, Json out) {
  out["point"] = point.Label();
  out["concurrency"] = point.concurrency > 0 ? Json(point.concurrency) : Json(nullptr);
  out["request_rate"] = point.concurrency > 0 ? Json(nullptr) : Rate(point.request_rate);
  return out;
}

Json DistributionJson(const Distribution& d) {
  return {{"count", d.count}, {"mean", Number(d.mean)}, {"median", Number(d.median)}, {"p90", Number(d.p90)},
          {"p95", Number(d.p95)}, {"p99", Number(d.p99)},       {"max", Number(d.max)},       {"min", Number(d.min)},
          {"stddev", Number(d.stddev)}};
}

Json LoadJson(const BenchConfig& c) {
  Json concurrency = Json::array(), rates = Json::array();
  for (const LoadPoint& point : c.points) {
    if (point.concurrency > 0) concurrency.push_back(point.concurrency);
    else rates.push_back(Rate(point.request_rate));
  }
  return {{"concurrency", concurrency}, {"request_rate", rates},  {"arrival", ArrivalName(c.arrival)},
          {"max_concurrency", c.max_concurrency}, {"num_requests", c.num_requests}, {"duration_s", c.duration_s},
          {"repeat", c.repeat}};
}

Json WorkloadJson(const WorkloadConfig& w, const Calibration& calibration) {
  return {{"kind", WorkloadName(w.kind)},
          {"input_len", w.input.mean_tokens},
          {"input_len_range", w.input.range},
          {"output_len", w.output.mean_tokens},
          {"output_len_range", w.output.range},
          {"num_groups", w.num_groups},
          {"prefix_len", w.prefix_len_tokens},
          {"turns", w.turns},
          {"dataset", w.dataset_path.empty() ? Json(nullptr) : Json(w.dataset_path)},
          {"seed", w.seed},
          {"tokens_per_word", w.tokens_per_word},
          {"tokens_per_word_measured", calibration.measured},
          {"calibration", calibration.note}};
}

Json ConfigJson(const BenchReport& report) {
  const BenchConfig& c = report.config;
  return {{"urls", c.urls},
          {"endpoint", EndpointName(c.endpoint)},
          {"compare", c.compare()},
          {"load", LoadJson(c)},
          {"workload", WorkloadJson(c.workload, report.calibration)},
          {"ignore_eos", c.ignore_eos},
          {"temperature", Optional(c.temperature)},
          {"timeout_s", c.timeout_s},
          {"slo", {{"ttft_ms", Optional(c.slo.ttft_ms)}, {"tpot_ms", Optional(c.slo.tpot_ms)},
                   {"e2e_ms", Optional(c.slo.e2e_ms)}}}};
}

Json RoundJson(const RoundMetrics& m) {
  Json round = {{"target", m.target_label}, {"url", m.url}, {"model", m.model}};
  round = PointJson(m.point, std::move(round));
  round.update({{"num_rounds", m.num_rounds},
                {"duration_s", m.wall_s},
                {"num_requests", m.num_requests},
                {"completed", m.num_completed},
                {"failed", m.num_failed},
                {"errors", m.errors},
                {"error_examples", m.error_examples},
                {"usage_reported", m.num_usage_reported},
                {"total_input_tokens", m.total_input_tokens},
                {"total_output_tokens", m.total_output_tokens},
                {"request_throughput", Number(m.request_throughput)},
                {"input_token_throughput", Number(m.input_token_throughput)},
                {"output_token_throughput", Number(m.output_token_throughput)},
                {"total_token_throughput", Number(m.total_token_throughput)},
                {"goodput", Optional(m.goodput)},
                {"num_good", m.num_good},
                {"ttft_ms", DistributionJson(m.ttft_ms)},
                {"tpot_ms", DistributionJson(m.tpot_ms)},
                {"itl_ms", DistributionJson(m.itl_ms)},
                {"e2e_latency_ms", DistributionJson(m.e2e_ms)},
                {"ttft_quantiles_ms", m.ttft_quantiles_ms},
                {"itl_quantiles_ms", m.itl_quantiles_ms},
                {"client_cpu_s", m.client_cpu_s},
                {"client_cpu_us_per_request", m.client_cpu_us_per_request},
                {"server_busy_fraction", Optional(m.server_busy_fraction)}});
  return round;
}

Json ComparisonsJson(const BenchReport& report) {
  Json comparisons = Json::array();
  size_t index = 0;
  for (const ComparedPoint& pair : PairRounds(report)) {
    Json ratio = Json::object(), a = Json::object(), b = Json::object();
    for (const MetricField& field : ScalarMetrics()) {
      a[field.name] = Number(field.get(*pair.a));
      b[field.name] = Number(field.get(*pair.b));
      ratio[field.name] = Number(Ratio(field.get(*pair.a), field.get(*pair.b)));
    }
    Json entry = PointJson(pair.a->point, Json::object());
    entry.update({{"a_round", index}, {"b_round", index + 1}, {"a", a}, {"b", b}, {"ratio", ratio}});
    comparisons.push_back(std::move(entry));
    index += 2;
  }
  return comparisons;
}

}  // namespace

std::string JsonReport(const BenchReport& report, int indent) {
  Json targets = Json::array();
  for (const TargetInfo& t : report.targets) targets.push_back({{"label", t.label}, {"url", t.url}, {"model", t.model}});
  Json rounds = Json::array();
  for (const RoundMetrics& m : report.rounds) rounds.push_back(RoundJson(m));
  Json root = {{"tool", "surge bench"},         {"started_at", report.started_at}, {"config", ConfigJson(report)},
               {"targets", targets},            {"notes", report.notes},           {"rounds", rounds}};
  if (report.config.compare()) root["comparisons"] = ComparisonsJson(report);
  return root.dump(indent, ' ', false, Json::error_handler_t::replace) + (indent >= 0 ? "\n" : "");
}

}  // namespace surge::bench
