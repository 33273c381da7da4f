// `surge scale simulate`'s outputs: a JSON summary with the per-minute series, and a
// self-contained HTML page (inline SVG, no script from anywhere else).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "autoscale/simulator.h"

namespace surge::autoscale {
namespace {

using Json = nlohmann::json;

Json Summary(const SimulationResult& r, double slo_s) {
  const double num_minutes = std::max<size_t>(1, r.minutes.size());
  return {{"minutes", r.minutes.size()},
          {"minutes_meeting_slo", r.num_minutes_meeting_slo},
          {"fraction_meeting_slo", r.num_minutes_meeting_slo / num_minutes},
          {"slo_ttft_p95_s", slo_s},
          {"replica_hours", r.replica_hours},
          {"cost_usd", r.cost_usd},
          {"peak_replicas", r.peak_replicas},
          {"max_queue", r.max_queue},
          {"max_ttft_p95_s", r.max_ttft_p95_s}};
}

Json Series(const SimulationResult& r) {
  Json demand = Json::array(), pending = Json::array(), queue = Json::array(), ttft = Json::array(),
       cost = Json::array(), ready = Json::object();
  for (const std::string& name : r.class_names) ready[name] = Json::array();
  for (const MinuteSample& m : r.minutes) {
    demand.push_back(m.demand_qps);
    pending.push_back(m.num_pending);
    queue.push_back(std::round(m.queue * 1000) / 1000);
    ttft.push_back(std::round(m.ttft_p95_s * 1e4) / 1e4);
    cost.push_back(m.usd_per_hour);
    for (size_t c = 0; c < r.class_names.size(); ++c) ready[r.class_names[c]].push_back(m.ready_by_class[c]);
  }
  return {{"demand_qps", demand}, {"ready_by_class", ready}, {"pending", pending}, {"queue", queue},
          {"ttft_p95_s", ttft}, {"usd_per_hour", cost}};
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string Num(double value, int digits = 4) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

struct Line {
  std::string label;
  std::string color;
  std::vector<double> values;
  bool dashed = false;
};

constexpr int kWidth = 1100, kHeight = 220, kLeft = 60, kBottom = 24, kTop = 24;

// One chart: lines over minutes, y from 0 to the largest value (or `y_max`).
std::string Chart(const std::string& title, const std::vector<Line>& lines, std::optional<double> y_max = {}) {
  double top = 0;
  size_t n = 1;
  for (const Line& line : lines) {
    for (double v : line.values) top = std::max(top, v);
    n = std::max(n, line.values.size());
  }
  if (y_max) top = *y_max;
  if (!(top > 0)) top = 1;
  const double plot_w = kWidth - kLeft - 10, plot_h = kHeight - kTop - kBottom;
  auto x = [&](size_t i) { return kLeft + plot_w * i / std::max<size_t>(1, n - 1); };
  auto y = [&](double v) { return kTop + plot_h * (1 - std::min(v, top) / top); };
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(kHeight) + "\" role=\"img\" aria-label=\"" + Escape(title) + "\">";
  svg += "<text x=\"" + std::to_string(kLeft) + "\" y=\"16\" class=\"title\">" + Escape(title) + "</text>";
  for (int g = 0; g <= 4; ++g) {
    double v = top * g / 4;
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - 10) + "\" y1=\"" + Num(y(v)) +
           "\" y2=\"" + Num(y(v)) + "\" class=\"grid\"/><text x=\"" + std::to_string(kLeft - 6) + "\" y=\"" +
           Num(y(v) + 4) + "\" class=\"axis\" text-anchor=\"end\">" + Num(v, 3) + "</text>";
  }
  for (size_t hour = 0; hour * 60 < n; hour += std::max<size_t>(1, n / 60 / 12)) {
    svg += "<text x=\"" + Num(x(hour * 60)) + "\" y=\"" + std::to_string(kHeight - 6) +
           "\" class=\"axis\" text-anchor=\"middle\">" + std::to_string(hour) + "h</text>";
  }
  int legend_x = kLeft + 20 + 7 * static_cast<int>(title.size());  // after the title
  for (const Line& line : lines) {
    std::string points;
    for (size_t i = 0; i < line.values.size(); ++i) points += Num(x(i), 6) + "," + Num(y(line.values[i]), 6) + " ";
    svg += "<polyline fill=\"none\" stroke=\"" + line.color + "\" stroke-width=\"2\"" +
           (line.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + points + "\"/>";
    svg += "<rect x=\"" + std::to_string(legend_x) + "\" y=\"7\" width=\"12\" height=\"12\" fill=\"" + line.color +
           "\"/><text x=\"" + std::to_string(legend_x + 16) + "\" y=\"17\" class=\"axis\">" + Escape(line.label) + "</text>";
    legend_x += 40 + 7 * static_cast<int>(line.label.size());
  }
  return svg + "</svg>\n";
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"};

std::vector<double> Field(const SimulationResult& r, double MinuteSample::*field) {
  std::vector<double> out;
  for (const MinuteSample& m : r.minutes) out.push_back(m.*field);
  return out;
}

std::string Charts(const SimulationReport& report) {
  const SimulationResult& a = report.autoscaled;
  std::vector<double> capacity, pending, fixed_cost;
  std::vector<Line> replicas;
  for (size_t c = 0; c < a.class_names.size(); ++c) {
    Line line{"ready " + a.class_names[c], kColors[(c + 2) % 6], {}};
    for (const MinuteSample& m : a.minutes) line.values.push_back(m.ready_by_class[c]);
    replicas.push_back(std::move(line));
  }
  for (const MinuteSample& m : a.minutes) {
    int ready = 0;
    for (int r : m.ready_by_class) ready += r;
    capacity.push_back(ready * report.model.slo_qps);
    pending.push_back(m.num_pending);
  }
  replicas.push_back({"pending", "#ff7f0e", pending, true});
  std::vector<double> slo(a.minutes.size(), report.options.slo_ttft_p95_s);
  double ttft_top = std::max(report.options.slo_ttft_p95_s * 3, 1e-3);
  std::string html;
  html += Chart("Demand (QPS) and ready capacity within the SLO",
                {{"demand", kColors[0], Field(a, &MinuteSample::demand_qps)}, {"capacity", kColors[1], capacity, true}});
  html += Chart("Replicas per class", replicas);
  html += Chart("Queue (requests waiting beyond capacity)",
                {{"autoscaled", kColors[0], Field(a, &MinuteSample::queue)},
                 {"fixed fleet", kColors[1], Field(report.fixed, &MinuteSample::queue), true}});
  html += Chart("P95 TTFT (s), worst of each minute; axis capped at 3x the SLO",
                {{"autoscaled", kColors[0], Field(a, &MinuteSample::ttft_p95_s)},
                 {"fixed fleet", kColors[1], Field(report.fixed, &MinuteSample::ttft_p95_s), true},
                 {"SLO", "#555555", slo, true}}, ttft_top);
  html += Chart("Cost (USD per hour)", {{"autoscaled", kColors[0], Field(a, &MinuteSample::usd_per_hour)},
                                        {"fixed fleet", kColors[1], Field(report.fixed, &MinuteSample::usd_per_hour), true}});
  return html;
}

std::string SummaryTable(const SimulationReport& report) {
  auto row = [](const std::string& name, const SimulationResult& r) {
    double n = std::max<size_t>(1, r.minutes.size());
    return "<tr><th>" + name + "</th><td>" + std::to_string(r.num_minutes_meeting_slo) + " / " +
           std::to_string(r.minutes.size()) + " (" + Num(100.0 * r.num_minutes_meeting_slo / n) + "%)</td><td>" +
           Num(r.replica_hours) + "</td><td>" + Num(r.cost_usd) + "</td><td>" + std::to_string(r.peak_replicas) +
           "</td><td>" + Num(r.max_ttft_p95_s) + "</td></tr>";
  };
  return "<table><tr><th></th><th>minutes meeting the SLO</th><th>replica-hours</th><th>cost (USD)</th>"
         "<th>peak replicas</th><th>worst P95 TTFT (s)</th></tr>" +
         row("autoscaled", report.autoscaled) +
         row("fixed fleet of " + std::to_string(report.fixed_replicas), report.fixed) + "</table>\n";
}

}  // namespace

std::string SimulationJson(const SimulationReport& report) {
  const double slo = report.options.slo_ttft_p95_s;
  Json out = {{"tool", "surge scale simulate"},
              {"trace", report.trace_name},
              {"policy", report.policy_path},
              {"model", {{"instance_max_qps", report.model.max_qps},
                         {"instance_slo_qps", report.model.slo_qps},
                         {"slo_source", report.model.slo_source}}},
              {"startup_delay_s", std::chrono::duration<double>(report.options.startup_delay).count()},
              {"autoscaled", Summary(report.autoscaled, slo)},
              {"fixed", Summary(report.fixed, slo)},
              {"series", Series(report.autoscaled)},
              {"decisions", report.autoscaled.decisions}};
  out["fixed"]["replicas"] = report.fixed_replicas;
  out["series_fixed"] = Series(report.fixed);
  return out.dump(1) + "\n";
}

std::string SimulationHtml(const SimulationReport& report) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>surge scale simulate: " +
      Escape(report.trace_name) + "</title>\n<style>body{font:14px sans-serif;margin:20px;background:#fafafa}"
      "svg{display:block;margin:8px 0;background:#fff;border:1px solid #ddd}.title{font-weight:bold;font-size:13px}"
      ".axis{font-size:11px;fill:#444}.grid{stroke:#eee}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
      "padding:4px 8px;text-align:right}pre{font-size:11px;max-height:300px;overflow:auto;background:#fff}</style>"
      "</head>\n<body>\n<h1>surge scale simulate</h1>\n<p>Trace <b>" + Escape(report.trace_name) + "</b>, policy <b>" +
      Escape(report.policy_path) + "</b>. One instance: " + Num(report.model.max_qps) + " QPS at saturation, " +
      Num(report.model.slo_qps) + " QPS within the P95 TTFT SLO of " + Num(report.options.slo_ttft_p95_s) + " s (" +
      Escape(report.model.slo_source) + "); replicas ready " +
      Num(std::chrono::duration<double>(report.options.startup_delay).count()) + " s after they are asked for.</p>\n";
  html += SummaryTable(report) + Charts(report);
  html += "<h2>Scaling decisions</h2>\n<pre>";
  for (const std::string& line : report.autoscaled.decisions) html += Escape(line) + "\n";
  html += "</pre>\n<script>document.documentElement.dataset.ok = "
          "document.querySelectorAll('svg polyline').length >= 10 ? '1' : '0';</script>\n</body></html>\n";
  return html;
}

}  // namespace surge::autoscale
