// Helpers for the jinja unit tests: render a template with a JSON context in one call.
#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.h"

namespace surge::jinja::testing {

// Renders `source` with `context_json` (a JSON object as text); errors come back as
// "ERROR: <message>" so tests can compare either outcome with one EXPECT_EQ.
inline std::string Render(std::string_view source, std::string_view context_json = "{}",
                          const Limits& limits = Limits()) {
  auto parsed = Template::Parse(source, limits);
  if (!parsed.ok()) return "ERROR: " + parsed.status().message();
  auto rendered = parsed->Render(nlohmann::ordered_json::parse(context_json));
  if (!rendered.ok()) return "ERROR: " + rendered.status().message();
  return *rendered;
}

// The error message, or "" when rendering succeeded.
inline std::string RenderError(std::string_view source, std::string_view context_json = "{}",
                               const Limits& limits = Limits()) {
  std::string out = Render(source, context_json, limits);
  return out.rfind("ERROR: ", 0) == 0 ? out.substr(7) : std::string();
}

}  // namespace surge::jinja::testing
