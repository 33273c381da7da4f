// The HTML report page: CSS and the chart-drawing script, with a placeholder for the data.
// Plain SVG built by ~200 lines of JavaScript: no library, no network, prints well.
#include "bench/html_report.h"

namespace surge::bench {

const char kHtmlTemplate[] = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>surge bench report</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fafafa; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
#meta { color: #555; } #status { margin: 8px 0; color: #b00; white-space: pre-wrap; }
table { border-collapse: collapse; background: #fff; }
th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; } th { background: #eef; }
tr.ratio td { color: #446; font-style: italic; }
.row { display: flex; flex-wrap: wrap; gap: 16px; }
svg.chart { background: #fff; border: 1px solid #ddd; }
svg text { font: 12px system-ui, sans-serif; fill: #333; } svg text.title { font-size: 14px; font-weight: 600; }
pre { background: #fff; border: 1px solid #ddd; padding: 8px; overflow: auto; max-height: 240px; }
</style>
</head>
<body>
<h1>surge bench</h1>
<div id="meta"></div>
<div id="status"></div>
<h2>Summary</h2><div id="summary"></div>
<h2>Throughput vs latency (across the sweep)</h2><div class="row" id="sweep"></div>
<h2>TTFT distribution</h2>
<div>histograms of: <select id="pick"></select></div>
<div class="row" id="ttft"></div>
<h2>Inter-token latency distribution</h2><div class="row" id="itl"></div>
<h2>Configuration</h2><pre id="config"></pre>
<script id="report-data" type="application/json">@@REPORT_JSON@@</script>
<script>
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                  "#bcbd22", "#7f7f7f"];
  function fail(message) {
    document.documentElement.setAttribute("data-error", message);
    document.getElementById("status").textContent = "report script error: " + message;
  }
  window.addEventListener("error", (e) => fail(e.message || "error"));

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function label(parent, x, y, s, attrs) {
    const t = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "-";
    if (Number.isInteger(v)) return String(v);
    const a = Math.abs(v);
    if (a >= 1000) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    return String(+v.toPrecision(3));
  }
  function ticks(lo, hi, n) {
    if (!(hi > lo)) hi = lo + (lo === 0 ? 1 : Math.abs(lo));
    const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    const step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
    const out = [];
    for (let v = Math.floor(lo / step) * step; v < hi + step * 0.999; v += step) out.push(+v.toPrecision(12));
    return out;
  }

  // spec: {title, xLabel, yLabel, series: [{name, points: [[x, y]], bars: [[x0, x1, y]], labels}]}
  function chart(parent, spec) {
    const W = 560, H = 350, m = { l: 64, r: 24, t: 50, b: 46 };
    const svg = el("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, class: "chart" }, parent);
    label(svg, W / 2, 20, spec.title, { "text-anchor": "middle", class: "title" });
    const xs = [], ys = [0];
    for (const s of spec.series) {
      for (const p of s.points || []) { xs.push(p[0]); ys.push(p[1]); }
      for (const b of s.bars || []) { xs.push(b[0], b[1]); ys.push(b[2]); }
    }
    const finite = (v) => isFinite(v);
    if (!xs.filter(finite).length) {
      label(svg, W / 2, H / 2, "no data", { "text-anchor": "middle" });
      return svg;
    }
    const xlo = Math.min(...xs.filter(finite)), xhi = Math.max(...xs.filter(finite));
    const xt = ticks(xlo, xhi + (spec.padX ? 0.08 * (xhi - xlo || 1) : 0), 6);
    const yt = ticks(Math.min(...ys.filter(finite)), Math.max(...ys.filter(finite)), 5);
    const x0 = xt[0], x1 = xt[xt.length - 1], y0 = yt[0], y1 = yt[yt.length - 1];
    const X = (v) => m.l + (v - x0) / (x1 - x0) * (W - m.l - m.r);
    const Y = (v) => H - m.b - (v - y0) / (y1 - y0) * (H - m.t - m.b);
    for (const v of yt) {
      el("line", { x1: m.l, x2: W - m.r, y1: Y(v), y2: Y(v), stroke: "#e4e4e4" }, svg);
      label(svg, m.l - 6, Y(v) + 4, fmt(v), { "text-anchor": "end" });
    }
    for (const v of xt) {
      el("line", { x1: X(v), x2: X(v), y1: m.t, y2: H - m.b, stroke: "#f0f0f0" }, svg);
      label(svg, X(v), H - m.b + 16, fmt(v), { "text-anchor": "middle" });
    }
    el("rect", { x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "none", stroke: "#999" }, svg);
    label(svg, (m.l + W - m.r) / 2, H - 8, spec.xLabel, { "text-anchor": "middle" });
    label(svg, 14, (m.t + H - m.b) / 2, spec.yLabel,
          { "text-anchor": "middle", transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")" });
    spec.series.forEach((s, i) => drawSeries(svg, s, s.color || COLORS[i % COLORS.length], X, Y));
    legend(svg, spec.series, m.l, 38);
    return svg;
  }
  function drawSeries(svg, s, color, X, Y) {
    for (const b of s.bars || []) {
      el("rect", { x: X(b[0]), y: Y(b[2]), width: Math.max(1, X(b[1]) - X(b[0]) - 1), height: Y(0) - Y(b[2]),
                   fill: color, "fill-opacity": 0.55 }, svg);
    }
    const pts = (s.points || []).filter((p) => isFinite(p[0]) && isFinite(p[1]));
    if (!pts.length) return;
    const d = pts.map((p, k) => (k ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1)).join(" ");
    el("path", { d: d, fill: "none", stroke: color, "stroke-width": 2 }, svg);
    if (!s.labels) return;
    pts.forEach((p, k) => {
      el("circle", { cx: X(p[0]), cy: Y(p[1]), r: 4, fill: color }, svg);
      label(svg, X(p[0]) + 6, Y(p[1]) - 6, s.labels[k] || "");
    });
  }
  // One row under the title, wrapping never: long sweeps abbreviate to the first ten series.
  function legend(svg, series, left, y) {
    let x = left;
    series.slice(0, 10).forEach((s, i) => {
      el("rect", { x: x, y: y - 9, width: 10, height: 10, fill: s.color || COLORS[i % COLORS.length] }, svg);
      x += 14 + label(svg, x + 14, y, s.name).getComputedTextLength() + 12;
    });
  }

  function roundName(r) { return (r.target ? r.target + " " : "") + r.point; }
  function cdf(q) { return (q || []).map((v, i) => [v, 100 * i / (q.length - 1)]); }
  // Fraction of requests (%) per bin, from the quantile sketch (linear between quantiles).
  function histogram(q, numBins, lo, hi) {
    if (!q || q.length < 2) return [];
    const F = (x) => {
      if (x <= q[0]) return 0;
      if (x >= q[q.length - 1]) return 1;
      let i = 0;
      while (q[i + 1] < x) i++;
      const span = q[i + 1] - q[i];
      return (i + (span > 0 ? (x - q[i]) / span : 1)) / (q.length - 1);
    };
    const width = (hi - lo) / numBins || 1, bars = [];
    for (let b = 0; b < numBins; b++) {
      const a = lo + b * width;
      bars.push([a, a + width, 100 * (F(a + width) - F(a))]);
    }
    if (hi === lo) bars[0][2] = 100;
    return bars;
  }

  function summary(report) {
    const cols = [["requests", "num_requests"], ["mean TTFT ms", (r) => r.ttft_ms.mean],
                  ["P95 TTFT ms", (r) => r.ttft_ms.p95], ["mean TPOT ms", (r) => r.tpot_ms.mean],
                  ["mean ITL ms", (r) => r.itl_ms.mean], ["mean latency ms", (r) => r.e2e_latency_ms.mean],
                  ["req/s", "request_throughput"], ["output tok/s", "output_token_throughput"],
                  ["goodput req/s", "goodput"], ["errors", "failed"]];
    const get = (r, c) => (typeof c[1] === "string" ? r[c[1]] : c[1](r));
    let html = "<table><tr><th>round</th>" + cols.map((c) => "<th>" + c[0] + "</th>").join("") + "</tr>";
    const row = (name, vals, cls) =>
      "<tr" + (cls ? ' class="' + cls + '"' : "") + "><td>" + name + "</td>" +
      vals.map((v) => "<td>" + v + "</td>").join("") + "</tr>";
    const rounds = report.rounds;
    for (let i = 0; i < rounds.length; i++) {
      html += row(escapeHtml(roundName(rounds[i])), cols.map((c) => fmt(get(rounds[i], c))));
      if (report.config.compare && i % 2 === 1) {
        html += row(rounds[i].point + " A/B",
                    cols.map((c) => { const b = get(rounds[i], c); return b ? fmt(get(rounds[i - 1], c) / b) + "x" : "-"; }),
                    "ratio");
      }
    }
    document.getElementById("summary").innerHTML = html + "</table>";
  }
  function escapeHtml(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }

  function sweepCharts(report) {
    const byTarget = {};
    for (const r of report.rounds) (byTarget[r.target || "server"] = byTarget[r.target || "server"] || []).push(r);
    const series = (y) => Object.keys(byTarget).map((t) => ({
      name: t, labels: byTarget[t].map((r) => r.point),
      points: byTarget[t].map((r) => [r.output_token_throughput, y(r)]) }));
    const box = document.getElementById("sweep");
    chart(box, { title: "Output throughput vs mean latency", xLabel: "output tokens/s", yLabel: "mean latency (ms)",
                 series: series((r) => r.e2e_latency_ms.mean), padX: true });
    chart(box, { title: "Output throughput vs P95 TTFT", xLabel: "output tokens/s", yLabel: "P95 TTFT (ms)",
                 series: series((r) => r.ttft_ms.p95), padX: true });
  }

  function distributionCharts(report, key, boxId, title) {
    const box = document.getElementById(boxId);
    box.innerHTML = "";
    chart(box, { title: title + " CDF (all rounds)", xLabel: "ms", yLabel: "% of samples",
                 series: report.rounds.map((r) => ({ name: roundName(r), points: cdf(r[key]) })) });
    const picked = pickedRounds(report);
    let lo = Infinity, hi = -Infinity;
    for (const r of picked) {
      const q = r[key] || [];
      if (q.length) { lo = Math.min(lo, q[0]); hi = Math.max(hi, q[q.length - 1]); }
    }
    chart(box, { title: title + " histogram (" + picked.map(roundName).join(" vs ") + ")", xLabel: "ms",
                 yLabel: "% of samples",
                 series: picked.map((r, i) => ({ name: roundName(r), color: COLORS[i],
                                                 bars: isFinite(lo) ? histogram(r[key], 30, lo, hi) : [] })) });
  }
  function pickedRounds(report) {
    const i = +document.getElementById("pick").value || 0;
    return report.config.compare ? [report.rounds[2 * i], report.rounds[2 * i + 1]].filter(Boolean)
                                 : [report.rounds[i]].filter(Boolean);
  }

  function render(report) {
    const targets = report.targets.map((t) => (t.label ? t.label + " = " : "") + t.url + " (" + (t.model || "?") + ")");
    document.getElementById("meta").textContent = targets.join(", ") + " | workload " + report.config.workload.kind +
        ", endpoint " + report.config.endpoint + " | " + report.started_at;
    document.getElementById("config").textContent = JSON.stringify(report.config, null, 2) +
        (report.notes.length ? "\n\nnotes:\n" + report.notes.join("\n") : "");
    summary(report);
    sweepCharts(report);
    const pick = document.getElementById("pick");
    const choices = report.config.compare ? report.rounds.filter((r, i) => i % 2 === 0).map((r) => r.point)
                                          : report.rounds.map(roundName);
    choices.forEach((name, i) => { const o = document.createElement("option"); o.value = i; o.textContent = name;
                                   pick.appendChild(o); });
    pick.value = String(Math.max(0, choices.length - 1));
    const redraw = () => {
      distributionCharts(report, "ttft_quantiles_ms", "ttft", "TTFT");
      distributionCharts(report, "itl_quantiles_ms", "itl", "ITL");
    };
    pick.addEventListener("change", () => { try { redraw(); } catch (e) { fail(String(e)); } });
    redraw();
  }

  try {
    render(JSON.parse(document.getElementById("report-data").textContent));
    if (!document.documentElement.hasAttribute("data-error")) {
      document.documentElement.setAttribute("data-ok", "1");
    }
  } catch (e) {
    fail(String((e && e.stack) || e));
  }
})();
</script>
</body>
</html>
)HTML";

}  // namespace surge::bench
