# cmake -DINPUT=page.html -DOUTPUT=page_html.cc -P embed_html.cmake: writes the definition
# of surge::obs::DashboardHtml() (dashboard.h) returning INPUT's bytes.
file(READ ${INPUT} html)
set(delimiter "surge_dashboard")
string(FIND "${html}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"")
endif()
file(WRITE ${OUTPUT} "// Generated from obs/dashboard/dashboard.html by embed_html.cmake: edit the HTML, not this.\n"
  "#include \"obs/dashboard/dashboard.h\"\n\n"
  "namespace surge::obs {\n\n"
  "std::string_view DashboardHtml() {\n"
  "  static constexpr char kHtml[] = R\"${delimiter}(${html})${delimiter}\";\n"
  "  return {kHtml, sizeof(kHtml) - 1};\n"
  "}\n\n"
  "}  // namespace surge::obs\n")
