#include "bench/csv_report.h"

#include <cmath>
#include <cstdio>
#include <functional>

namespace surge::bench {
namespace {

// RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled.
std::string Cell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string Number(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return "inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::string Errors(const RoundMetrics& m) {
  std::string text;
  for (const auto& [kind, count] : m.errors) text += (text.empty() ? "" : ";") + kind + ":" + std::to_string(count);
  return text;
}

// `value` gives each scalar metric's cell: the round's own, or an A/B ratio.
std::string Row(const std::string& target, const RoundMetrics& m, const std::string& errors,
                const std::function<double(const MetricField&)>& value) {
  const bool ratio = target == "A/B";  // a ratio row names no single server
  std::string row = Cell(target) + "," + (ratio ? "" : Cell(m.url)) + "," + (ratio ? "" : Cell(m.model)) + "," +
                    Cell(m.point.Label()) + "," +
                    (m.point.concurrency > 0 ? std::to_string(m.point.concurrency) : "") + "," +
                    (m.point.concurrency > 0 ? "" : Number(m.point.request_rate));
  for (const MetricField& field : ScalarMetrics()) row += "," + Number(value(field));
  return row + "," + Cell(errors) + "\n";
}

}  // namespace

std::string CsvReport(const BenchReport& report) {
  std::string csv = "target,url,model,point,concurrency,request_rate";
  for (const MetricField& field : ScalarMetrics()) csv += std::string(",") + field.name;
  csv += ",errors\n";
  auto own = [](const RoundMetrics& m) { return [&m](const MetricField& field) { return field.get(m); }; };
  if (!report.config.compare()) {
    for (const RoundMetrics& m : report.rounds) csv += Row(m.target_label, m, Errors(m), own(m));
    return csv;
  }
  for (const ComparedPoint& pair : PairRounds(report)) {
    csv += Row("A", *pair.a, Errors(*pair.a), own(*pair.a));
    csv += Row("B", *pair.b, Errors(*pair.b), own(*pair.b));
    csv += Row("A/B", *pair.a, "", [&pair](const MetricField& field) {
      return Ratio(field.get(*pair.a), field.get(*pair.b));
    });
  }
  return csv;
}

}  // namespace surge::bench
