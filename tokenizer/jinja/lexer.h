// Lexer: template source -> tokens. Follows @huggingface/jinja (and so transformers'
// Jinja settings): trim_blocks and lstrip_blocks on, one trailing newline dropped,
// `{%- -%}` whitespace control, transformers' {% generation %} tags removed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::jinja {

enum class TokenKind : uint8_t {
  kText,
  kComment,
  kOpenStatement,    // {%
  kCloseStatement,   // %}
  kOpenExpression,   // {{
  kCloseExpression,  // }}
  kNumber,           // 12, 1.5, and -1 where a minus sign is unary
  kString,
  kIdentifier,
  kEquals,           // =
  kOpenParen,
  kCloseParen,
  kOpenBracket,      // [
  kCloseBracket,
  kOpenBrace,        // {
  kCloseBrace,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditive,         // + - ~
  kMultiplicative,   // * / // %
  kPower,            // **
  kComparison,       // < > <= >= == !=
  kUnary,            // + - in unary position without a number after them
};

struct Token {
  TokenKind kind;
  std::string value;  // text, unescaped string, operator or identifier
  size_t offset;      // byte offset in the original source, for error messages
};

StatusOr<std::vector<Token>> Tokenize(std::string_view source);

// "line L, column C" (1-based, columns in bytes) of a byte offset of `source`.
std::string DescribePosition(std::string_view source, size_t offset);

}  // namespace surge::jinja
