#include "obs/exposition.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace surge::obs {
namespace {

bool IsNameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

bool ParseValue(std::string_view text, double* out) {
  if (text == "+Inf" || text == "Inf") return *out = std::numeric_limits<double>::infinity(), true;
  if (text == "-Inf") return *out = -std::numeric_limits<double>::infinity(), true;
  if (text == "NaN") return *out = std::numeric_limits<double>::quiet_NaN(), true;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (end != text.data() + text.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    *out = std::strtod(std::string(text).c_str(), nullptr);  // 1e999: +Inf, 1e-999: 0, as strtod reads them
    return true;
  }
  return ec == std::errc();
}

// `{a="x",b="y"}` from `pos` (at '{'); leaves pos after '}'.
bool ParseLabels(std::string_view line, size_t* pos, Labels* labels) {
  size_t i = *pos + 1;
  while (i < line.size() && line[i] != '}') {
    const size_t begin = i;
    while (i < line.size() && IsNameChar(line[i], i == begin)) ++i;
    std::string name(line.substr(begin, i - begin));
    if (name.empty() || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return false;
    i += 2;
    std::string value;
    while (i < line.size() && line[i] != '"') {
      char c = line[i++];
      if (c == '\\' && i < line.size()) {
        const char e = line[i++];
        c = e == 'n' ? '\n' : e;
      }
      value.push_back(c);
    }
    if (i == line.size()) return false;
    ++i;  // the closing quote
    (*labels)[std::move(name)] = std::move(value);
    if (i < line.size() && line[i] == ',') ++i;
  }
  if (i == line.size()) return false;
  *pos = i + 1;
  return true;
}

// The next line of `*text` (its '\n' and a trailing '\r' dropped); `*text` moves past it.
std::string_view NextLine(std::string_view* text) {
  const size_t newline = text->find('\n');
  std::string_view line = text->substr(0, newline);
  text->remove_prefix(newline == std::string_view::npos ? text->size() : newline + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

bool ParseSampleLine(std::string_view line, Sample* sample) {
  *sample = Sample();
  size_t pos = 0;
  while (pos < line.size() && IsNameChar(line[pos], pos == 0)) ++pos;
  if (pos == 0) return false;
  sample->name = std::string(line.substr(0, pos));
  if (pos < line.size() && line[pos] == '{' && !ParseLabels(line, &pos, &sample->labels)) return false;
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const size_t end = line.find(' ', pos);
  return ParseValue(line.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos),
                    &sample->value);
}

StatusOr<Exposition> ParseExposition(std::string_view text) {
  Exposition exposition;
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::string_view line = NextLine(&text);
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (line.rfind("# TYPE ", 0) == 0) {
        std::string_view rest = line.substr(7);
        const size_t space = rest.find(' ');
        if (space != std::string_view::npos) exposition.types[std::string(rest.substr(0, space))] = rest.substr(space + 1);
      }
      continue;
    }
    Sample sample;
    if (!ParseSampleLine(line, &sample)) {
      return InvalidArgumentError("line " + std::to_string(number) + ": not a sample: '" + std::string(line) + "'");
    }
    exposition.samples.push_back(std::move(sample));
  }
  return exposition;
}

Status VisitSamples(std::string_view text, const std::function<Status(const Sample&)>& visit) {
  Sample sample;
  while (!text.empty()) {
    const std::string_view line = NextLine(&text);
    if (line.empty() || line.front() == '#' || !ParseSampleLine(line, &sample)) continue;
    if (Status status = visit(sample); !status.ok()) return status;
  }
  return OkStatus();
}

}  // namespace surge::obs
