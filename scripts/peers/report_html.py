"""The HTML page of scripts/peers/report.py: one self-contained file (inline CSS and SVG drawn
here, no script, no network) with the machine and its limits at the top, errors per engine,
prefix-cache counters, then for each workload and client four charts against concurrency
(output tok/s, P50 TTFT, P95 TTFT, mean ITL), one line per engine, and the table."""
import html
import json
import math

COLORS = {"surge": "#d62728", "vllm": "#1f77b4", "llamacpp": "#2ca02c"}
METRICS = [("output_tok_s", "output tok/s"), ("ttft_p50_ms", "P50 TTFT ms"), ("ttft_p95_ms", "P95 TTFT ms"),
           ("itl_mean_ms", "mean ITL ms")]
W, H, PAD = 360, 220, 44


def engine_order(engines):
    """surge first, then the peers in the issue's order, then any other."""
    known = ["surge", "vllm", "llamacpp"]
    return [e for e in known if e in engines] + sorted(e for e in engines if e not in known)


def esc(value):
    return html.escape(str(value))


def short(value):
    """An axis label of at most 5 characters: 950, 12.5k, 1.2M."""
    for limit, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def scale(values, lo_px, hi_px, log):
    """A function from data to pixels (log2 for concurrency), and the data's range."""
    lo, hi = min(values), max(values)
    f = (lambda v: math.log2(v)) if log else (lambda v: v)
    a, b = f(lo), f(hi)
    if b == a:
        b = a + 1
    return lambda v: lo_px + (f(v) - a) / (b - a) * (hi_px - lo_px)


def chart(points, metric, label):
    """An SVG line chart of metric against concurrency, one polyline per engine."""
    series = {}
    for p in points:
        if p.get(metric) is not None:
            series.setdefault(p["engine"], []).append((p["concurrency"], p[metric]))
    parts = [f'<svg class="chart" width="{W}" height="{H}" viewBox="0 0 {W} {H}">',
             f'<text x="{W / 2}" y="14" text-anchor="middle" class="title">{esc(label)}</text>']
    xs = sorted({c for s in series.values() for c, _ in s})
    ys = [v for s in series.values() for _, v in s]
    if not xs:
        return "\n".join(parts + [f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle">no data</text></svg>'])
    x = scale(xs, PAD, W - 12, log=min(xs) > 0)
    y = scale([0, max(ys) * 1.05 or 1], H - 28, 24, log=False)
    parts.append(f'<line x1="{PAD}" y1="{H - 28}" x2="{W - 12}" y2="{H - 28}" class="axis"/>')
    parts.append(f'<line x1="{PAD}" y1="24" x2="{PAD}" y2="{H - 28}" class="axis"/>')
    for c in xs:
        parts.append(f'<text x="{x(c):.1f}" y="{H - 14}" text-anchor="middle">{c}</text>')
    top = max(ys) * 1.05 or 1
    for i in range(5):
        v = top * i / 4
        parts.append(f'<text x="{PAD - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{short(v)}</text>')
    for engine, pts in sorted(series.items()):
        pts.sort()
        color = COLORS.get(engine, "#555")
        path = " ".join(f"{x(c):.1f},{y(v):.1f}" for c, v in pts)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for c, v in pts:
            parts.append(f'<circle cx="{x(c):.1f}" cy="{y(v):.1f}" r="3" fill="{color}">'
                         f'<title>{esc(engine)} c={c}: {v:.4g}</title></circle>')
    parts.append(f'<text x="{W / 2}" y="{H - 2}" text-anchor="middle">concurrency</text></svg>')
    return "\n".join(parts)


def legend(engines):
    return " ".join(f'<span style="color:{COLORS.get(e, "#555")}">&#9632; {esc(e)}</span>' for e in engines)


def engine_section(data):
    rows = []
    for name in engine_order(data["engines"]):
        e = data["engines"][name]
        before, after = e["prefix_cache_before"], e["prefix_cache_after"]
        counters = "<br>".join(f"{esc(k)}: {before.get(k, 0):,.0f} &rarr; {after.get(k, 0):,.0f}"
                               for k in sorted(set(before) | set(after))) or "none read"
        errors = [e["error"]] if e.get("error") else []
        errors += e.get("client_errors", [])
        failed = sum(p.get("failed") or 0 for p in data["points"] if p["engine"] == name)
        errors.insert(0, f"{failed} failed requests in all points")
        rows.append(f"<tr><td>{esc(name)}</td><td>{counters}</td><td><pre>{esc(chr(10).join(errors))}</pre></td></tr>")
    return ("<h2>Engines</h2><table><tr><th>engine</th><th>prefix-cache counters (before &rarr; after)</th>"
            "<th>errors</th></tr>" + "".join(rows) + "</table>")


def meta_section(meta):
    items = "".join(f"<tr><th>{esc(k)}</th><td>{esc(json.dumps(v) if isinstance(v, (dict, list)) else v)}</td></tr>"
                    for k, v in meta.items())
    return f"<h2>Machine, limits, settings</h2><table>{items}</table>"


def page(data):
    engines = engine_order(data["engines"])
    sections = []
    for workload, client in sorted({(p["workload"], p["client"]) for p in data["points"]}):
        pts = [p for p in data["points"] if (p["workload"], p["client"]) == (workload, client)]
        charts = "".join(chart(pts, m, label) for m, label in METRICS)
        sections.append(f'<h2>{esc(workload)} &mdash; client {esc(client)}</h2><div class="row">{charts}</div>')
    table = html.escape(data.get("table_markdown", ""))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>surge vs vLLM vs llama.cpp</title>
<style>body{{font:14px sans-serif;margin:16px}} table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;
padding:3px 6px;text-align:left;vertical-align:top}} .row{{display:flex;flex-wrap:wrap}} .chart text{{font-size:10px}}
.chart .title{{font-size:12px;font-weight:bold}} .axis{{stroke:#888}} pre{{margin:0;white-space:pre-wrap}}</style></head>
<body><h1>surge vs vLLM vs llama.cpp</h1>
{meta_section(data.get("meta", {}))}
{engine_section(data)}
<p>{legend(engines)}</p>
{"".join(sections)}
<h2>Table</h2><pre>{table}</pre>
</body></html>
"""
