#include "server/tool_call_parser.h"

#include <algorithm>
#include <random>

#include "api/request_body.h"
#include "api/response_common.h"
#include "server/tool_call_parser_internal.h"

namespace surge {
namespace tool_call_internal {
namespace {

std::optional<api::Json> ParseJson(std::string_view text) {
  // Model output is untrusted too: bounded like a request body before anything recursive.
  api::ApiResult<api::Json> parsed = api::ParseJsonBounded(text, api::kDefaultMaxJsonDepth, "tool call", "");
  if (!parsed.ok()) return std::nullopt;
  return std::move(parsed).value();
}

std::optional<ToolCall> CallFromParts(std::string_view name, const api::Json& arguments) {
  name = Trim(name);
  if (name.empty() || name.find_first_of("\n<>{}\"") != std::string_view::npos) return std::nullopt;
  if (arguments.is_string()) return MakeCall(name, arguments.get<std::string>());  // arguments as a JSON string
  if (!arguments.is_object()) return std::nullopt;
  ToolCall call;
  call.name = name;
  call.arguments = api::Dump(arguments);
  return call;
}

}  // namespace

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

size_t SkipSpace(std::string_view text, size_t at) {
  while (at < text.size() && IsSpace(text[at])) ++at;
  return at;
}

size_t JsonValueSize(std::string_view text) { return JsonValueScanner().Size(text, 0); }

size_t JsonValueScanner::Size(std::string_view buffer, size_t start) {
  if (start != start_) {
    start_ = start;
    scanned_ = 0;
    depth_ = 0;
    in_string_ = escaped_ = false;
  }
  const std::string_view text = buffer.substr(start);
  for (; scanned_ < text.size(); ++scanned_) {
    ++bytes_scanned_;
    const char c = text[scanned_];
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') in_string_ = true;
    if (c == '{' || c == '[') ++depth_;
    if ((c == '}' || c == ']') && --depth_ == 0) {
      const size_t size = scanned_ + 1;
      start_ = std::string_view::npos;  // the next value starts a new scan
      return size;
    }
  }
  return std::string_view::npos;
}

size_t PartialTagSize(std::string_view text, std::string_view tag) {
  for (size_t size = std::min(text.size(), tag.size() - 1); size > 0; --size) {
    if (tag.starts_with(text.substr(text.size() - size))) return size;
  }
  return 0;
}

ToolCallDelta BufferedParser::Add(std::string_view text) {
  ToolCallDelta out;
  pending_ += text;
  Scan(/*final=*/false, &out);
  return out;
}

ToolCallDelta BufferedParser::Finish() {
  ToolCallDelta out;
  Scan(/*final=*/true, &out);
  return out;
}

std::optional<ToolCall> MakeCall(std::string_view name, std::string_view arguments_json) {
  std::optional<api::Json> arguments = ParseJson(arguments_json);
  if (!arguments || !arguments->is_object()) return std::nullopt;
  return CallFromParts(name, *arguments);
}

std::optional<ToolCall> CallFromJson(std::string_view text) {
  std::optional<api::Json> object = ParseJson(text);
  if (!object || !object->is_object()) return std::nullopt;
  const auto name = object->find("name");
  if (name == object->end() || !name->is_string()) return std::nullopt;
  for (const char* key : {"arguments", "parameters"}) {
    if (object->contains(key)) return CallFromParts(name->get<std::string>(), (*object)[key]);
  }
  return CallFromParts(name->get<std::string>(), api::Json::object());
}

}  // namespace tool_call_internal

StatusOr<ToolCallParserKind> ParseToolCallParserName(std::string_view name) {
  if (name == "none") return ToolCallParserKind::kNone;
  if (name == "hermes") return ToolCallParserKind::kHermes;
  if (name == "deepseek_v3" || name == "deepseek-v3") return ToolCallParserKind::kDeepSeekV3;
  if (name == "llama3_json" || name == "llama3-json") return ToolCallParserKind::kLlama3Json;
  return InvalidArgumentError("unknown tool call parser '" + std::string(name) + "' (valid: " +
                              kToolCallParserNames + ")");
}

const char* ToolCallParserName(ToolCallParserKind kind) {
  switch (kind) {
    case ToolCallParserKind::kHermes: return "hermes";
    case ToolCallParserKind::kDeepSeekV3: return "deepseek_v3";
    case ToolCallParserKind::kLlama3Json: return "llama3_json";
    case ToolCallParserKind::kNone: break;
  }
  return "none";
}

ToolCallParserKind DefaultToolCallParser(std::string_view model_type) {
  // "deepseek2" is llama.cpp's GGUF architecture name for DeepSeek V2/V3/R1.
  if (model_type == "deepseek_v2" || model_type == "deepseek_v3" || model_type == "deepseek2") {
    return ToolCallParserKind::kDeepSeekV3;
  }
  for (std::string_view qwen : {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}) {
    if (model_type == qwen) return ToolCallParserKind::kHermes;
  }
  if (model_type == "llama") return ToolCallParserKind::kLlama3Json;
  return ToolCallParserKind::kNone;
}

std::vector<std::string_view> ToolCallMarkers(ToolCallParserKind kind) {
  switch (kind) {
    case ToolCallParserKind::kHermes: return {"<tool_call>", "</tool_call>"};
    case ToolCallParserKind::kDeepSeekV3:
      return {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
              "<｜tool▁sep｜>"};
    case ToolCallParserKind::kLlama3Json: return {"<|python_tag|>"};
    case ToolCallParserKind::kNone: break;
  }
  return {};
}

void ToolCallDelta::Append(ToolCallDelta more) {
  content += more.content;
  for (ToolCall& call : more.calls) calls.push_back(std::move(call));
}

std::unique_ptr<ToolCallParser> MakeToolCallParser(ToolCallParserKind kind) {
  switch (kind) {
    case ToolCallParserKind::kHermes: return tool_call_internal::MakeHermesParser();
    case ToolCallParserKind::kDeepSeekV3: return tool_call_internal::MakeDeepSeekV3Parser();
    case ToolCallParserKind::kLlama3Json: return tool_call_internal::MakeLlama3JsonParser();
    case ToolCallParserKind::kNone: break;
  }
  return nullptr;
}

std::unique_ptr<ToolCallParser> MakeForcedToolCallParser(std::string function_name) {
  if (function_name.empty()) return tool_call_internal::MakeRequiredCallsParser();
  return tool_call_internal::MakeNamedFunctionParser(std::move(function_name));
}

ToolCallDelta ParseToolCalls(ToolCallParserKind kind, std::string_view text) {
  std::unique_ptr<ToolCallParser> parser = MakeToolCallParser(kind);
  if (parser == nullptr) return {std::string(text), {}};
  ToolCallDelta out = parser->Add(text);
  out.Append(parser->Finish());
  return out;
}

std::string NewToolCallId() {
  // One generator per thread: choices are parsed on several worker threads at once.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<int> pick(0, sizeof(kAlphabet) - 2);
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng)];
  return id;
}

}  // namespace surge
