#include "bench/html_report.h"

#include "bench/json_report.h"

namespace surge::bench {
namespace {

// Inside <script type="application/json"> the text must never hold "</script" or "<!--":
// '<' only occurs inside JSON strings, where \u003c is the same character.
std::string EscapeForScript(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string HtmlReport(const BenchReport& report) {
  std::string page = kHtmlTemplate;
  const std::string placeholder = kHtmlDataPlaceholder;
  size_t at = page.find(placeholder);
  if (at != std::string::npos) page.replace(at, placeholder.size(), EscapeForScript(JsonReport(report, -1)));
  return page;
}

}  // namespace surge::bench
