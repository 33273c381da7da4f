#include "tokenizer/jinja/template.h"

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/json_convert.h"
#include "tokenizer/jinja/parser.h"

namespace surge::jinja {
namespace {

template <typename Json>
StatusOr<Object> ContextFromJson(const Json& context, const Limits& limits) {
  if (context.is_null()) return Object();
  if (!context.is_object()) return InvalidArgumentError("template context must be a JSON object");
  ASSIGN_OR_RETURN(Value value, FromJson(context, limits));
  return value.AsObject();
}

}  // namespace

StatusOr<Template> Template::Parse(std::string_view source, const Limits& limits) {
  ASSIGN_OR_RETURN(Body body, ParseTemplate(source));
  return Template(std::make_shared<const std::string>(source), std::make_shared<const Body>(std::move(body)),
                  limits);
}

StatusOr<std::string> Template::Render(const Object& context) const {
  internal::Interpreter interpreter(*source_, limits_);
  return interpreter.Render(*body_, context);
}

StatusOr<std::string> Template::Render(const nlohmann::ordered_json& context) const {
  ASSIGN_OR_RETURN(Object object, ContextFromJson(context, limits_));
  return Render(object);
}

StatusOr<std::string> Template::Render(const nlohmann::json& context) const {
  ASSIGN_OR_RETURN(Object object, ContextFromJson(context, limits_));
  return Render(object);
}

StatusOr<std::string> RenderChatTemplate(const Template& chat_template, const nlohmann::ordered_json& messages,
                                         bool add_generation_prompt, const nlohmann::ordered_json& extra) {
  if (!messages.is_array()) return InvalidArgumentError("messages must be a JSON array");
  ASSIGN_OR_RETURN(Object context, ContextFromJson(extra, chat_template.limits()));
  ASSIGN_OR_RETURN(Value message_values, FromJson(messages, chat_template.limits()));
  context.Set("messages", std::move(message_values));
  context.Set("add_generation_prompt", Value::Bool(add_generation_prompt));
  return chat_template.Render(context);
}

StatusOr<std::string> RenderChatTemplate(std::string_view template_source, const nlohmann::ordered_json& messages,
                                         bool add_generation_prompt, const nlohmann::ordered_json& extra) {
  ASSIGN_OR_RETURN(Template parsed, Template::Parse(template_source));
  return RenderChatTemplate(parsed, messages, add_generation_prompt, extra);
}

}  // namespace surge::jinja
