// Jinja templates as Hugging Face chat templates use them: parse once, render many times.
//
//   ASSIGN_OR_RETURN(jinja::Template t, jinja::Template::Parse(config["chat_template"]));
//   ASSIGN_OR_RETURN(std::string prompt, jinja::RenderChatTemplate(t, messages, true, extra));
//
// Semantics follow Python Jinja2 with transformers' settings (trim_blocks, lstrip_blocks,
// its tojson) and are checked against @huggingface/jinja. Errors (syntax, raise_exception,
// type errors, limits) come back as a Status; rendering never crashes or runs unbounded.
// At the default Limits a render needs at most ~0.5 MB of stack (~2 MB under ASan).
// A parsed Template is immutable: any number of threads may Render it at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tokenizer/jinja/value.h"

namespace surge::jinja {

struct Stmt;  // ast.h

class Template {
 public:
  // Syntax errors name the line and column. Unknown filters and tests are errors when used.
  static StatusOr<Template> Parse(std::string_view source, const Limits& limits = Limits());

  // Renders with the variables of a JSON object. Prefer ordered_json: key order shows in
  // |tojson output (nlohmann::json sorts keys).
  StatusOr<std::string> Render(const nlohmann::ordered_json& context) const;
  StatusOr<std::string> Render(const nlohmann::json& context) const;
  StatusOr<std::string> Render(const Object& context) const;

  const std::string& source() const { return *source_; }
  const Limits& limits() const { return limits_; }

 private:
  using Body = std::vector<std::unique_ptr<Stmt>>;
  Template(std::shared_ptr<const std::string> source, std::shared_ptr<const Body> body, const Limits& limits)
      : source_(std::move(source)), body_(std::move(body)), limits_(limits) {}

  std::shared_ptr<const std::string> source_;  // shared: copies of a Template are cheap
  std::shared_ptr<const Body> body_;
  Limits limits_;
};

// Renders a chat template as transformers' apply_chat_template(tokenize=False) does:
// the context is `extra` (bos_token, eos_token, tools, documents, enable_thinking, ...)
// plus `messages` and `add_generation_prompt`.
StatusOr<std::string> RenderChatTemplate(const Template& chat_template, const nlohmann::ordered_json& messages,
                                         bool add_generation_prompt,
                                         const nlohmann::ordered_json& extra = nlohmann::ordered_json::object());
StatusOr<std::string> RenderChatTemplate(std::string_view template_source, const nlohmann::ordered_json& messages,
                                         bool add_generation_prompt,
                                         const nlohmann::ordered_json& extra = nlohmann::ordered_json::object());

}  // namespace surge::jinja
