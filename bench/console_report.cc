#include "bench/console_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace surge::bench {
namespace {

using Row = std::vector<std::string>;

std::string Format(double value, const char* format) {
  if (std::isnan(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string RatioCell(double a, double b) { return Format(Ratio(a, b), "%.2fx"); }

Row Header(const BenchReport& report) {
  Row row = {"point"};
  if (report.config.compare()) row.push_back("server");
  for (const char* title : {"requests", "mean TTFT ms", "P95 TTFT ms", "mean TPOT ms", "mean ITL ms",
                            "mean latency ms", "req/s", "output tok/s"}) {
    row.push_back(title);
  }
  if (report.config.slo.any()) row.push_back("goodput req/s");
  row.push_back("errors");
  return row;
}

// The numbers of one round, in Header() order after "point" and "server".
std::vector<double> Values(const RoundMetrics& m, bool with_goodput) {
  std::vector<double> values = {static_cast<double>(m.num_requests), m.ttft_ms.mean, m.ttft_ms.p95,
                                m.tpot_ms.mean, m.itl_ms.mean, m.e2e_ms.mean, m.request_throughput,
                                m.output_token_throughput};
  if (with_goodput) values.push_back(m.goodput.value_or(NAN));
  values.push_back(static_cast<double>(m.num_failed));
  return values;
}

Row ValueRow(std::string point, std::string server, const std::vector<double>& values, bool compare) {
  Row row = {std::move(point)};
  if (compare) row.push_back(std::move(server));
  for (size_t i = 0; i < values.size(); ++i) {
    bool count = i == 0 || i + 1 == values.size();
    row.push_back(Format(values[i], count ? "%.0f" : "%.2f"));
  }
  return row;
}

std::vector<Row> Rows(const BenchReport& report) {
  std::vector<Row> rows = {Header(report)};
  const bool goodput = report.config.slo.any();
  if (!report.config.compare()) {
    for (const RoundMetrics& m : report.rounds) rows.push_back(ValueRow(m.point.Label(), "", Values(m, goodput), false));
    return rows;
  }
  for (const ComparedPoint& pair : PairRounds(report)) {
    std::vector<double> a = Values(*pair.a, goodput), b = Values(*pair.b, goodput);
    rows.push_back(ValueRow(pair.a->point.Label(), "A", a, true));
    rows.push_back(ValueRow("", "B", b, true));
    Row ratio = {"", "A/B"};
    for (size_t i = 0; i < a.size(); ++i) ratio.push_back(RatioCell(a[i], b[i]));
    rows.push_back(std::move(ratio));
  }
  return rows;
}

std::string Layout(const std::vector<Row>& rows) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < rows[r].size(); ++i) {
      const std::string& cell = rows[r][i];
      std::string pad(widths[i] - cell.size(), ' ');
      out += i == 0 ? cell + pad : "  " + pad + cell;  // the first column left-aligned, numbers right
    }
    out += '\n';
    if (r == 0) {
      size_t total = 0;
      for (size_t w : widths) total += w + 2;
      out += std::string(total - 2, '-') + '\n';
    }
  }
  return out;
}

std::string Preamble(const BenchReport& report) {
  const BenchConfig& c = report.config;
  std::string out = "surge bench";
  for (const TargetInfo& t : report.targets) {
    out += (t.label.empty() ? " " : " " + t.label + "=") + t.url + " (model " + (t.model.empty() ? "?" : t.model) + ")";
  }
  char line[256];
  std::snprintf(line, sizeof(line),
                "\nworkload %s, endpoint %s, input %lld tokens (+-%.0f%%), output %lld tokens (+-%.0f%%), "
                "%.2f tokens/word (%s)\n\n",
                std::string(WorkloadName(c.workload.kind)).c_str(), std::string(EndpointName(c.endpoint)).c_str(),
                static_cast<long long>(c.workload.input.mean_tokens), c.workload.input.range * 100,
                static_cast<long long>(c.workload.output.mean_tokens), c.workload.output.range * 100,
                c.workload.tokens_per_word, report.calibration.measured ? "measured" : "assumed");
  out += line;
  if (c.workload.kind == WorkloadKind::kSharedPrefix) {
    out.insert(out.size() - 2, ", shared prefix " + std::to_string(c.workload.prefix_len_tokens) + " tokens x " +
                                   std::to_string(c.workload.num_groups) + " groups");
  } else if (c.workload.kind == WorkloadKind::kMultiTurn) {
    out.insert(out.size() - 2, ", " + std::to_string(c.workload.turns) + " turns per conversation");
  }
  return out;
}

std::string ErrorLines(const BenchReport& report) {
  std::string out;
  for (const RoundMetrics& m : report.rounds) {
    for (const auto& [kind, count] : m.errors) {
      std::string where = (m.target_label.empty() ? "" : m.target_label + " ") + m.point.Label();
      auto example = m.error_examples.find(kind);
      out += "  " + where + ": " + kind + " x" + std::to_string(count);
      if (example != m.error_examples.end() && !example->second.empty()) out += " (" + example->second + ")";
      out += '\n';
    }
  }
  return out.empty() ? out : "\nerrors:\n" + out;
}

}  // namespace

std::string ConsoleReport(const BenchReport& report) {
  return Preamble(report) + Layout(Rows(report)) + ErrorLines(report);
}

}  // namespace surge::bench
