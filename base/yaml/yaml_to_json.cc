#include "base/yaml/yaml_to_json.h"

#include <yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "base/json_depth.h"

namespace surge {
namespace {

using nlohmann::json;

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

std::string At(const yaml_mark_t& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

Status ErrorAt(const yaml_mark_t& mark, const std::string& message) {
  return InvalidArgumentError(At(mark) + ": " + message);
}

bool OneOf(std::string_view text, std::initializer_list<std::string_view> options) {
  for (std::string_view option : options) {
    if (text == option) return true;
  }
  return false;
}

bool AllDigits(std::string_view text, int base) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool digit = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                                  : c >= '0' && c < static_cast<char>('0' + base);
    if (!digit) return false;
  }
  return true;
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?  (the core schema's float)
bool IsCoreFloat(std::string_view text) {
  size_t at = 0;
  auto digits = [&] {
    const size_t from = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    return at - from;
  };
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
  const size_t num_int_digits = digits();
  size_t num_frac_digits = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    num_frac_digits = digits();
  }
  if (num_int_digits == 0 && num_frac_digits == 0) return false;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
    if (digits() == 0) return false;
  }
  return at == text.size();
}

// An integer of the core schema, or nullopt when `text` is not one; an error when it is
// one that does not fit 64 bits.
StatusOr<std::optional<json>> CoreInt(std::string_view text, const yaml_mark_t& mark) {
  int base = 10;
  std::string_view digits = text;
  bool negative = false;
  if (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0o") {
    base = text[1] == 'x' ? 16 : 8;
    digits = text.substr(2);
  } else if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    digits = text.substr(1);
  }
  if (!AllDigits(digits, base)) return std::optional<json>();
  const std::string owned(digits);
  errno = 0;
  const unsigned long long magnitude = std::strtoull(owned.c_str(), nullptr, base);
  const bool fits = errno == 0 && (negative ? magnitude <= 9223372036854775808ull : true);
  if (!fits) return ErrorAt(mark, "integer '" + std::string(text) + "' does not fit in 64 bits");
  if (negative) return std::optional<json>(json(static_cast<int64_t>(0 - magnitude)));
  if (magnitude <= static_cast<unsigned long long>(INT64_MAX)) {
    return std::optional<json>(json(static_cast<int64_t>(magnitude)));
  }
  return std::optional<json>(json(static_cast<uint64_t>(magnitude)));
}

// A plain scalar typed by the YAML 1.2 core schema.
StatusOr<json> PlainScalar(std::string_view text, const yaml_mark_t& mark) {
  if (OneOf(text, {"", "~", "null", "Null", "NULL"})) return json(nullptr);
  if (OneOf(text, {"true", "True", "TRUE"})) return json(true);
  if (OneOf(text, {"false", "False", "FALSE"})) return json(false);
  ASSIGN_OR_RETURN(std::optional<json> integer, CoreInt(text, mark));
  if (integer) return *integer;
  if (IsCoreFloat(text)) {
    const double value = std::strtod(std::string(text).c_str(), nullptr);
    if (!std::isfinite(value)) return ErrorAt(mark, "number '" + std::string(text) + "' is out of range");
    return json(value);
  }
  if (OneOf(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN",
                   ".NAN"})) {
    return ErrorAt(mark, "'" + std::string(text) + "' is not a finite number (JSON has no such value)");
  }
  return json(std::string(text));
}

// libyaml's events, owned.
class Parser {
 public:
  explicit Parser(std::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  }
  ~Parser() {
    if (has_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  StatusOr<const yaml_event_t*> Next() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = false;
    if (!yaml_parser_parse(&parser_, &event_)) {
      std::string message = parser_.problem != nullptr ? parser_.problem : "malformed YAML";
      if (parser_.context != nullptr) message += " (" + std::string(parser_.context) + ")";
      return ErrorAt(parser_.problem_mark, message);
    }
    has_event_ = true;
    return &event_;
  }

 private:
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool has_event_ = false;
};

// Builds the tree from the event stream with an explicit stack (no recursion).
class TreeBuilder {
 public:
  explicit TreeBuilder(const YamlLimits& limits) : limits_(limits) {}

  Status OnEvent(const yaml_event_t& event);
  json TakeRoot() { return std::move(root_); }

 private:
  struct Frame {
    json value;
    bool is_mapping;
    std::optional<std::string> key;  // a mapping's key waiting for its value
    std::string anchor;
    int64_t num_nodes_before;
    int32_t height = 1;
  };
  struct Anchored {
    json value;
    int64_t num_nodes;
    int32_t height;
  };

  Status OnScalar(const yaml_event_t& event);
  Status OnStart(const yaml_event_t& event, bool is_mapping, const char* anchor, const char* tag);
  Status OnEnd();
  Status OnAlias(const yaml_event_t& event);
  Status CountNodes(int64_t num, const yaml_mark_t& mark);
  Status Add(json value, int32_t height, const std::string& anchor, int64_t num_nodes_before);
  bool AwaitingKey() const { return !stack_.empty() && stack_.back().is_mapping && !stack_.back().key; }

  const YamlLimits limits_;
  std::vector<Frame> stack_;
  std::map<std::string, Anchored> anchors_;
  json root_;
  int64_t num_nodes_ = 0;
  int32_t num_documents_ = 0;
};

Status TreeBuilder::OnEvent(const yaml_event_t& event) {
  switch (event.type) {
    case YAML_DOCUMENT_START_EVENT:
      if (num_documents_ > 0) return ErrorAt(event.start_mark, "more than one YAML document");
      return OkStatus();
    case YAML_DOCUMENT_END_EVENT:
      ++num_documents_;
      return OkStatus();
    case YAML_SCALAR_EVENT:
      return OnScalar(event);
    case YAML_SEQUENCE_START_EVENT:
      return OnStart(event, false, reinterpret_cast<const char*>(event.data.sequence_start.anchor),
                     reinterpret_cast<const char*>(event.data.sequence_start.tag));
    case YAML_MAPPING_START_EVENT:
      return OnStart(event, true, reinterpret_cast<const char*>(event.data.mapping_start.anchor),
                     reinterpret_cast<const char*>(event.data.mapping_start.tag));
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      return OnEnd();
    case YAML_ALIAS_EVENT:
      return OnAlias(event);
    default:
      return OkStatus();  // stream start/end, no event
  }
}

Status TreeBuilder::CountNodes(int64_t num, const yaml_mark_t& mark) {
  num_nodes_ += num;
  if (num_nodes_ > limits_.max_nodes) {
    return ErrorAt(mark, "more than " + std::to_string(limits_.max_nodes) + " nodes (aliases expanded)");
  }
  return OkStatus();
}

Status TreeBuilder::OnScalar(const yaml_event_t& event) {
  const auto& scalar = event.data.scalar;
  const std::string_view text(reinterpret_cast<const char*>(scalar.value), scalar.length);
  const std::string_view tag = scalar.tag != nullptr ? reinterpret_cast<const char*>(scalar.tag) : "";
  if (!tag.empty() && tag != kStrTag) return ErrorAt(event.start_mark, "unsupported tag '" + std::string(tag) + "'");
  const int64_t num_nodes_before = num_nodes_;
  RETURN_IF_ERROR(CountNodes(1, event.start_mark));
  if (AwaitingKey()) {
    if (scalar.anchor != nullptr) return ErrorAt(event.start_mark, "anchors on mapping keys are not supported");
    Frame& top = stack_.back();
    if (top.value.contains(std::string(text))) return ErrorAt(event.start_mark, "duplicate key '" + std::string(text) + "'");
    top.key = std::string(text);
    return OkStatus();
  }
  const bool plain = scalar.style == YAML_PLAIN_SCALAR_STYLE && tag.empty();
  json value = std::string(text);
  if (plain) {
    ASSIGN_OR_RETURN(value, PlainScalar(text, event.start_mark));
  }
  const std::string anchor = scalar.anchor != nullptr ? reinterpret_cast<const char*>(scalar.anchor) : "";
  return Add(std::move(value), 0, anchor, num_nodes_before);
}

Status TreeBuilder::OnStart(const yaml_event_t& event, bool is_mapping, const char* anchor, const char* tag) {
  if (AwaitingKey()) return ErrorAt(event.start_mark, "mapping keys must be scalars");
  if (tag != nullptr) return ErrorAt(event.start_mark, "unsupported tag '" + std::string(tag) + "'");
  if (static_cast<int32_t>(stack_.size()) >= limits_.max_depth) {
    return ErrorAt(event.start_mark, "nested deeper than " + std::to_string(limits_.max_depth));
  }
  const int64_t num_nodes_before = num_nodes_;
  RETURN_IF_ERROR(CountNodes(1, event.start_mark));
  Frame frame{is_mapping ? json::object() : json::array(), is_mapping, std::nullopt, anchor != nullptr ? anchor : "",
              num_nodes_before};
  stack_.push_back(std::move(frame));
  return OkStatus();
}

Status TreeBuilder::OnEnd() {
  Frame frame = std::move(stack_.back());
  stack_.pop_back();
  return Add(std::move(frame.value), frame.height, frame.anchor, frame.num_nodes_before);
}

Status TreeBuilder::OnAlias(const yaml_event_t& event) {
  const std::string name = reinterpret_cast<const char*>(event.data.alias.anchor);
  auto found = anchors_.find(name);
  if (found == anchors_.end()) return ErrorAt(event.start_mark, "unknown or unfinished anchor '" + name + "'");
  if (AwaitingKey()) return ErrorAt(event.start_mark, "aliases as mapping keys are not supported");
  const Anchored& anchored = found->second;
  if (static_cast<int32_t>(stack_.size()) + anchored.height > limits_.max_depth) {
    return ErrorAt(event.start_mark, "alias '" + name + "' nests deeper than " + std::to_string(limits_.max_depth));
  }
  const int64_t num_nodes_before = num_nodes_;
  RETURN_IF_ERROR(CountNodes(anchored.num_nodes, event.start_mark));  // before the copy is made
  return Add(anchored.value, anchored.height, "", num_nodes_before);
}

Status TreeBuilder::Add(json value, int32_t height, const std::string& anchor, int64_t num_nodes_before) {
  if (!anchor.empty()) anchors_[anchor] = Anchored{value, num_nodes_ - num_nodes_before, height};
  if (stack_.empty()) {
    root_ = std::move(value);
    return OkStatus();
  }
  Frame& parent = stack_.back();
  parent.height = std::max(parent.height, height + 1);
  if (!parent.is_mapping) {
    parent.value.push_back(std::move(value));
    return OkStatus();
  }
  parent.value[*parent.key] = std::move(value);
  parent.key.reset();
  return OkStatus();
}

// nlohmann keeps the last of two equal keys; a config must not silently drop one.
StatusOr<json> ParseJsonRefusingDuplicates(const std::string& text, const std::string& path) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::optional<std::string> duplicate;
  auto on_event = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
        !duplicate) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  json tree = json::parse(text, on_event, /*allow_exceptions=*/false);
  if (tree.is_discarded()) return InvalidArgumentError(path + ": not valid JSON");
  if (duplicate) return InvalidArgumentError(path + ": duplicate key '" + *duplicate + "'");
  return tree;
}

}  // namespace

StatusOr<json> YamlToJson(std::string_view text, const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return InvalidArgumentError("YAML text of " + std::to_string(text.size()) + " bytes is over the limit of " +
                                std::to_string(limits.max_bytes));
  }
  Parser parser(text);
  TreeBuilder builder(limits);
  for (;;) {
    ASSIGN_OR_RETURN(const yaml_event_t* event, parser.Next());
    if (event->type == YAML_STREAM_END_EVENT) break;
    RETURN_IF_ERROR(builder.OnEvent(*event));
  }
  return builder.TakeRoot();
}

StatusOr<json> LoadConfigFile(const std::string& path, const YamlLimits& limits) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("cannot read config file " + path);
  std::string text(limits.max_bytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(file.gcount()));
  if (text.size() > limits.max_bytes) {
    return InvalidArgumentError(path + ": over the limit of " + std::to_string(limits.max_bytes) + " bytes");
  }
  const bool is_json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (!is_json) {
    StatusOr<json> tree = YamlToJson(text, limits);
    if (!tree.ok()) return tree.status().WithContext(path);
    return tree;
  }
  if (!JsonDepthWithin(text, limits.max_depth)) {
    return InvalidArgumentError(path + ": nested deeper than " + std::to_string(limits.max_depth));
  }
  return ParseJsonRefusingDuplicates(text, path);
}

}  // namespace surge
