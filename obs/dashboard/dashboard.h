// The built-in live dashboard page served at GET /dashboard by surge serve and surge route:
// one self-contained HTML document (dashboard.html, embedded at build time) that polls the
// same process's /metrics and /alarms and draws them.
#pragma once

#include <string_view>

namespace surge::obs {

inline constexpr std::string_view kDashboardContentType = "text/html; charset=utf-8";

// The page, for the lifetime of the program.
std::string_view DashboardHtml();

}  // namespace surge::obs
