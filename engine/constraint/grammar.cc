#include "engine/constraint/grammar.h"

#include <utility>

namespace surge {

ExprId Grammar::Add(Expr expr) {
  exprs_.push_back(std::move(expr));
  return static_cast<ExprId>(exprs_.size() - 1);
}

ExprId Grammar::Bytes(const ByteSet& bytes) {
  Expr e;
  e.kind = Expr::Kind::kBytes;
  e.bytes = bytes;
  return Add(std::move(e));
}

ExprId Grammar::Literal(std::string_view text) {
  std::vector<ExprId> items;
  items.reserve(text.size());
  for (char c : text) items.push_back(Byte(static_cast<uint8_t>(c)));
  if (items.size() == 1) return items[0];
  return Seq(std::move(items));
}

ExprId Grammar::Seq(std::vector<ExprId> items) {
  if (items.size() == 1) return items[0];
  Expr e;
  e.kind = Expr::Kind::kSeq;
  e.items = std::move(items);
  return Add(std::move(e));
}

ExprId Grammar::Alt(std::vector<ExprId> items) {
  if (items.size() == 1) return items[0];
  Expr e;
  e.kind = Expr::Kind::kAlt;
  e.items = std::move(items);
  return Add(std::move(e));
}

ExprId Grammar::Repeat(ExprId body, int32_t min, int32_t max) {
  Expr e;
  e.kind = Expr::Kind::kRepeat;
  e.items = {body};
  e.min = min;
  e.max = max;
  return Add(std::move(e));
}

ExprId Grammar::SepRepeat(ExprId body, ExprId separator, int32_t min, int32_t max) {
  Expr e;
  e.kind = Expr::Kind::kRepeat;
  e.items = {body, separator};
  e.min = min;
  e.max = max;
  return Add(std::move(e));
}

ExprId Grammar::Ref(RuleId rule) {
  Expr e;
  e.kind = Expr::Kind::kRef;
  e.rule = rule;
  return Add(std::move(e));
}

RuleId Grammar::AddRule(std::string name, bool call) {
  rules_.push_back(Rule{std::move(name), -1, call});
  return static_cast<RuleId>(rules_.size() - 1);
}

}  // namespace surge
