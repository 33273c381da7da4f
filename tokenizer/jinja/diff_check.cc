// Differential checker: renders the cases written by tests/node/jinja_cases.mjs and
// compares them with the reference's output. Exit status 0 when every case matches
// (identical text, or both sides raise an error).
//
//   jinja_diff_check CASES.json [--max-mismatches=N] [--verbose]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.h"

namespace {

using nlohmann::ordered_json;
using surge::jinja::Template;

struct Tally {
  int cases = 0;
  int passed = 0;
  int both_error = 0;
  int same_error_message = 0;
};

// Either the parsed templates by name or why one failed to parse.
using StatusOrTemplates = std::variant<std::map<std::string, Template>, std::string>;

int Report(const std::map<std::string, Tally>& tallies) {
  int total = 0;
  int passed = 0;
  for (const auto& [name, t] : tallies) {
    std::printf("%-12s %4d/%4d identical or both-error (%d both raised, %d with the same message)\n", name.c_str(),
                t.passed, t.cases, t.both_error, t.same_error_message);
    total += t.cases;
    passed += t.passed;
  }
  std::printf("jinja differential test: %d/%d cases pass\n", passed, total);
  return passed == total ? 0 : 1;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// "at byte N (line L): expected ...|... got ...|..." around the first difference.
// Moves a byte offset back to the start of the UTF-8 sequence it falls in.
size_t CharStart(const std::string& s, size_t i) {
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

std::string Excerpt(const std::string& s, size_t from, size_t to) {
  from = CharStart(s, std::min(from, s.size()));
  to = CharStart(s, std::min(to, s.size()));
  return Escape(s.substr(from, to - std::min(from, to)));
}

std::string DescribeDiff(const std::string& expected, const std::string& actual) {
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  i = CharStart(expected, i);
  size_t line = 1;
  for (size_t k = 0; k < i; ++k) line += expected[k] == '\n';
  size_t from = i > 40 ? i - 40 : 0;
  std::ostringstream os;
  os << "first difference at byte " << i << " (line " << line << "), lengths " << expected.size() << " vs "
     << actual.size() << "\n    expected: ..." << Excerpt(expected, from, i) << "|" << Excerpt(expected, i, i + 60)
     << "\n    actual:   ..." << Excerpt(actual, from, i) << "|" << Excerpt(actual, i, i + 60);
  return os.str();
}

StatusOrTemplates LoadTemplates(const ordered_json& doc) {
  std::map<std::string, Template> templates;
  for (const auto& [name, source] : doc["templates"].items()) {
    auto parsed = Template::Parse(source.get<std::string>());
    if (!parsed.ok()) return "template " + name + " failed to parse: " + parsed.status().ToString();
    templates.emplace(name, std::move(parsed).value());
  }
  return templates;
}

// Renders one case; returns "" when it matches the reference, else what differs.
std::string CheckCase(const Template& t, const ordered_json& c, Tally* tally) {
  auto rendered = t.Render(c["context"]);
  if (c.contains("error")) {
    std::string expected_error = c["error"].get<std::string>();
    if (rendered.ok()) {
      return "reference raised \"" + expected_error + "\" but surge rendered " + std::to_string(rendered->size()) +
             " bytes";
    }
    ++tally->both_error;
    tally->same_error_message += rendered.status().message() == expected_error;
    return "";
  }
  if (!rendered.ok()) return "surge failed: " + rendered.status().ToString();
  std::string expected = c["expected"].get<std::string>();
  return *rendered == expected ? "" : DescribeDiff(expected, *rendered);
}

int Run(const std::string& path, int max_mismatches, bool verbose) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot open " << path << "\n";
    return 2;
  }
  ordered_json doc = ordered_json::parse(in);
  StatusOrTemplates templates = LoadTemplates(doc);
  if (std::holds_alternative<std::string>(templates)) {
    std::cerr << std::get<std::string>(templates) << "\n";
    return 1;
  }
  const auto& by_name = std::get<std::map<std::string, Template>>(templates);
  std::map<std::string, Tally> tallies;
  int mismatches = 0;
  for (size_t i = 0; i < doc["cases"].size(); ++i) {
    const ordered_json& c = doc["cases"][i];
    std::string name = c["template"].get<std::string>();
    Tally& tally = tallies[name];
    ++tally.cases;
    std::string detail = CheckCase(by_name.at(name), c, &tally);
    tally.passed += detail.empty();
    if (!detail.empty() && ++mismatches <= max_mismatches) {
      std::cout << "MISMATCH case " << i << " (" << name << "): " << detail << "\n";
      if (verbose) std::cout << "    context: " << c["context"].dump() << "\n";
    }
  }
  return Report(tallies);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: jinja_diff_check CASES.json [--max-mismatches=N] [--verbose]\n";
    return 2;
  }
  try {  // a malformed case file or flag throws from nlohmann / std::stoi
    int max_mismatches = 10;
    bool verbose = false;
    for (int i = 2; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg.rfind("--max-mismatches=", 0) == 0) max_mismatches = std::stoi(arg.substr(17));
      if (arg == "--verbose") verbose = true;
    }
    return Run(argv[1], max_mismatches, verbose);
  } catch (const std::exception& e) {
    std::cerr << "jinja_diff_check: " << e.what() << "\n";
    return 2;
  }
}
