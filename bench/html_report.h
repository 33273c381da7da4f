// The HTML report (--html FILE): one self-contained page — inline CSS, SVG drawn by inline
// JavaScript, no network — with the summary table, the throughput-latency curve across the
// sweep, and TTFT / ITL distributions (CDF and histogram), A and B side by side.
#pragma once

#include <string>

#include "bench/runner.h"

namespace surge::bench {

// When its script has drawn everything without an exception, the page marks its root
// element data-ok="1" (otherwise data-error="..."), so a headless browser can check it.
std::string HtmlReport(const BenchReport& report);

// The page with a placeholder for the report's JSON (html_template.cc).
extern const char kHtmlTemplate[];
inline constexpr char kHtmlDataPlaceholder[] = "@@REPORT_JSON@@";

}  // namespace surge::bench
