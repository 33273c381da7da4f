// Statement execution: output, if, for, set, macro, call and filter blocks.
#include "tokenizer/jinja/interpreter.h"

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/lexer.h"

namespace surge::jinja::internal {

const Value* Scope::Lookup(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent_.get()) {
    if (const Value* v = s->vars_.Find(name)) return v;
  }
  return nullptr;
}

StatusOr<std::string> Interpreter::Render(const Body& body, const Object& context) {
  auto root = std::make_shared<Scope>(nullptr);
  Object globals = MakeGlobals(limits_);
  for (const auto& [name, value] : globals.entries()) root->Set(name, value);
  for (const auto& [name, value] : context.entries()) root->Set(name, value);
  std::string out;
  out_ = &out;
  StatusOr<Flow> flow = ExecBody(body, root);
  out_ = nullptr;
  if (!flow.ok()) return flow.status();
  return out;
}

Status Interpreter::Locate(const Status& status, size_t offset) {
  if (error_located_) return status;
  error_located_ = true;
  return Status(status.code(), "template error at " + DescribePosition(source_, offset) + ": " + status.message());
}

Status Interpreter::Step() {
  if (++steps_ > limits_.max_steps) {
    return ResourceExhaustedError("template ran more than " + std::to_string(limits_.max_steps) +
                                  " loop iterations and macro calls");
  }
  return OkStatus();
}

Status Interpreter::Write(std::string_view text) {
  if (out_->size() + text.size() > limits_.max_string_bytes) {
    return ResourceExhaustedError("rendered output longer than " + std::to_string(limits_.max_string_bytes) +
                                  " bytes");
  }
  out_->append(text);
  return OkStatus();
}

Status Interpreter::WriteValue(const Value& value) {
  if (value.is_string()) return Write(value.AsString());
  RETURN_IF_ERROR(AppendStr(value, limits_, out_));
  return Write("");  // re-checks the size
}

StatusOr<std::string> Interpreter::Capture(const Body& body, const ScopePtr& scope) {
  std::string captured;
  std::string* saved = out_;
  out_ = &captured;
  StatusOr<Flow> flow = ExecBody(body, scope);
  out_ = saved;
  if (!flow.ok()) return flow.status();
  return captured;
}

StatusOr<Interpreter::Flow> Interpreter::ExecBody(const Body& body, const ScopePtr& scope) {
  for (const StmtPtr& stmt : body) {
    ASSIGN_OR_RETURN(Flow flow, Exec(*stmt, scope));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

StatusOr<Interpreter::Flow> Interpreter::Exec(const Stmt& stmt, const ScopePtr& scope) {
  DepthGuard guard(this);
  if (depth_ > limits_.max_render_depth) {
    return Locate(ResourceExhaustedError("template nesting or recursion too deep"), stmt.offset);
  }
  Status status;
  switch (stmt.kind) {
    case StmtKind::kText: status = Write(stmt.text); break;
    case StmtKind::kOutput: {
      ASSIGN_OR_RETURN(Value value, Eval(*stmt.expr, scope));
      status = WriteValue(value);
      break;
    }
    case StmtKind::kIf: return ExecIf(stmt, scope);
    case StmtKind::kFor: status = ExecFor(stmt, scope); break;
    case StmtKind::kSet:
    case StmtKind::kSetBlock: status = ExecSet(stmt, scope); break;
    case StmtKind::kMacro: status = ExecMacro(stmt, scope); break;
    case StmtKind::kCallBlock: status = ExecCallBlock(stmt, scope); break;
    case StmtKind::kFilterBlock: status = ExecFilterBlock(stmt, scope); break;
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
  }
  if (!status.ok()) return Locate(status, stmt.offset);
  return Flow::kNormal;
}

StatusOr<Interpreter::Flow> Interpreter::ExecIf(const Stmt& stmt, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value test, Eval(*stmt.expr, scope));
  return ExecBody(test.Truthy() ? stmt.body : stmt.else_body, scope);
}

// The items a for loop visits: after the inline `if` filter, which sees the loop variables.
StatusOr<Array> Interpreter::LoopItems(const Stmt& stmt, const Value& iterable, const ScopePtr& loop_scope) {
  if (iterable.is_none() || iterable.is_bool() || iterable.is_number() || iterable.is_function() ||
      iterable.is_namespace()) {
    return InvalidArgumentError("'" + std::string(iterable.TypeName()) + "' object is not iterable");
  }
  ASSIGN_OR_RETURN(Array items, Iterate(iterable, "for"));
  if (!stmt.condition) return items;
  Array kept;
  for (Value& item : items) {
    RETURN_IF_ERROR(Step());
    RETURN_IF_ERROR(Assign(*stmt.target, item, loop_scope));
    ASSIGN_OR_RETURN(Value keep, Eval(*stmt.condition, loop_scope));
    if (keep.Truthy()) kept.push_back(std::move(item));
  }
  return kept;
}

namespace {

// Jinja's `loop` variable. One object per loop, updated in place each iteration, as
// Jinja's LoopContext is.
class LoopState {
 public:
  explicit LoopState(const Array& items) : items_(items), index_(std::make_shared<int64_t>(0)) {
    static constexpr const char* kFields[] = {"index", "index0", "revindex", "revindex0", "first", "last",
                                              "length", "previtem", "nextitem", "depth", "depth0"};
    Object object;
    for (const char* field : kFields) object.Set(field, Value());
    std::shared_ptr<int64_t> index = index_;
    object.Set("cycle", Value::MakeFunction("cycle", [index](const CallArgs& args) -> StatusOr<Value> {
      if (args.positional.empty()) return InvalidArgumentError("loop.cycle() needs at least one argument");
      return args.positional[*index % static_cast<int64_t>(args.positional.size())];
    }));
    value_ = Value::MakeObject(std::move(object));
  }

  const Value& value() const { return value_; }

  void Advance(int64_t i) {
    const int64_t n = static_cast<int64_t>(items_.size());
    *index_ = i;
    Object& o = value_.MutableObject();
    o.SetAt(0, Value::Int(i + 1));
    o.SetAt(1, Value::Int(i));
    o.SetAt(2, Value::Int(n - i));
    o.SetAt(3, Value::Int(n - i - 1));
    o.SetAt(4, Value::Bool(i == 0));
    o.SetAt(5, Value::Bool(i == n - 1));
    o.SetAt(6, Value::Int(n));
    o.SetAt(7, i > 0 ? items_[i - 1] : Value());
    o.SetAt(8, i + 1 < n ? items_[i + 1] : Value());
    o.SetAt(9, Value::Int(1));
    o.SetAt(10, Value::Int(0));
  }

 private:
  const Array& items_;
  std::shared_ptr<int64_t> index_;
  Value value_;
};

}  // namespace

Status Interpreter::ExecFor(const Stmt& stmt, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value iterable, Eval(*stmt.expr, scope));
  auto loop_scope = std::make_shared<Scope>(scope);
  ASSIGN_OR_RETURN(Array items, LoopItems(stmt, iterable, loop_scope));
  LoopState loop(items);
  loop_scope->Set("loop", loop.value());
  for (int64_t i = 0; i < static_cast<int64_t>(items.size()); ++i) {
    RETURN_IF_ERROR(Step());
    RETURN_IF_ERROR(Assign(*stmt.target, items[i], loop_scope));
    loop.Advance(i);
    ASSIGN_OR_RETURN(Flow flow, ExecBody(stmt.body, loop_scope));
    if (flow == Flow::kBreak) break;
  }
  if (items.empty() && !stmt.else_body.empty()) return ExecBody(stmt.else_body, loop_scope).status();
  return OkStatus();
}

Status Interpreter::Assign(const Expr& target, Value value, const ScopePtr& scope) {
  if (target.kind == ExprKind::kName) {
    scope->Set(target.name, std::move(value));
    return OkStatus();
  }
  if (target.kind == ExprKind::kTuple) {
    if (!value.is_array()) {
      return InvalidArgumentError("cannot unpack non-iterable " + std::string(value.TypeName()) + " object");
    }
    const Array& items = value.AsArray();
    if (items.size() != target.items.size()) {
      return InvalidArgumentError("expected " + std::to_string(target.items.size()) + " values to unpack, got " +
                                  std::to_string(items.size()));
    }
    for (size_t i = 0; i < items.size(); ++i) RETURN_IF_ERROR(Assign(*target.items[i], items[i], scope));
    return OkStatus();
  }
  // {% set ns.attr = value %}
  const Value* object = scope->Lookup(target.items[0]->name);
  if (object == nullptr || !object->is_namespace()) {
    return InvalidArgumentError("cannot assign attribute on non-namespace object '" + target.items[0]->name + "'");
  }
  if (ContainsReference(value)) {
    return InvalidArgumentError("a namespace attribute cannot hold a namespace or a function");
  }
  object->MutableObject().Set(target.name, std::move(value));
  return OkStatus();
}

Status Interpreter::ExecSet(const Stmt& stmt, const ScopePtr& scope) {
  if (stmt.kind == StmtKind::kSet) {
    ASSIGN_OR_RETURN(Value value, Eval(*stmt.expr, scope));
    return Assign(*stmt.target, std::move(value), scope);
  }
  ASSIGN_OR_RETURN(std::string captured, Capture(stmt.body, scope));
  return Assign(*stmt.target, Value::String(std::move(captured)), scope);
}

Status Interpreter::ExecMacro(const Stmt& stmt, const ScopePtr& scope) {
  // The macro sees the scope it was defined in. A weak reference: the scope holds the macro.
  std::weak_ptr<Scope> closure = scope;
  const Stmt* macro = &stmt;
  scope->Set(stmt.name, Value::MakeFunction(stmt.name, [this, macro, closure](const CallArgs& args) {
    return CallMacro(*macro, closure.lock(), args);
  }));
  return OkStatus();
}

StatusOr<Value> Interpreter::CallMacro(const Stmt& macro, const ScopePtr& closure, const CallArgs& args) {
  if (closure == nullptr) return InvalidArgumentError("macro '" + macro.name + "' called after its scope ended");
  if (call_depth_ >= limits_.max_call_depth) {
    return ResourceExhaustedError("macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
  }
  RETURN_IF_ERROR(Step());
  ++call_depth_;
  auto scope = std::make_shared<Scope>(closure);
  Status bound = BindParams(macro, args, scope);
  StatusOr<std::string> body = bound.ok() ? Capture(macro.body, scope) : StatusOr<std::string>(bound);
  --call_depth_;
  if (!body.ok()) return body.status();
  return Value::String(std::move(body).value());
}

// Positional arguments fill parameters in order, then `varargs`; keyword arguments fill
// parameters by name, then `kwargs`; `caller` comes from a {% call %} block.
Status Interpreter::BindParams(const Stmt& macro, const CallArgs& args, const ScopePtr& scope) {
  Array varargs;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < macro.params.size()) {
      scope->Set(macro.params[i].name, args.positional[i]);
    } else {
      varargs.push_back(args.positional[i]);
    }
  }
  Object kwargs;
  for (const auto& [name, value] : args.keyword) {
    size_t index = 0;
    while (index < macro.params.size() && macro.params[index].name != name) ++index;
    if (index < macro.params.size() && index < args.positional.size()) {
      return InvalidArgumentError("macro '" + macro.name + "' got multiple values for argument '" + name + "'");
    }
    if (index < macro.params.size() || name == "caller") {
      scope->Set(name, value);
    } else {
      kwargs.Set(name, value);
    }
  }
  scope->Set("varargs", Value::MakeArray(std::move(varargs), /*is_tuple=*/true));
  scope->Set("kwargs", Value::MakeObject(std::move(kwargs)));
  for (size_t i = args.positional.size(); i < macro.params.size(); ++i) {
    const Param& param = macro.params[i];
    if (args.Keyword(param.name) != nullptr) continue;
    Value value;
    if (param.default_value) {
      ASSIGN_OR_RETURN(value, Eval(*param.default_value, scope));
    }
    scope->Set(param.name, std::move(value));
  }
  return OkStatus();
}

Status Interpreter::ExecCallBlock(const Stmt& stmt, const ScopePtr& scope) {
  std::weak_ptr<Scope> closure = scope;
  const Stmt* block = &stmt;
  Value caller = Value::MakeFunction("caller", [this, block, closure](const CallArgs& args) -> StatusOr<Value> {
    Stmt as_macro;  // the block body runs like an anonymous macro with the block's params
    as_macro.name = "caller";
    for (const Param& p : block->params) as_macro.params.push_back(Param{p.name, nullptr});
    ScopePtr parent = closure.lock();
    if (parent == nullptr) return InvalidArgumentError("caller() used after its block ended");
    auto call_scope = std::make_shared<Scope>(parent);
    RETURN_IF_ERROR(BindParams(as_macro, args, call_scope));
    for (size_t i = args.positional.size(); i < block->params.size(); ++i) {
      const Param& p = block->params[i];
      if (p.default_value && args.Keyword(p.name) == nullptr) {
        ASSIGN_OR_RETURN(Value v, Eval(*p.default_value, call_scope));
        call_scope->Set(p.name, std::move(v));
      }
    }
    ASSIGN_OR_RETURN(std::string text, Capture(block->body, call_scope));
    return Value::String(std::move(text));
  });
  const Expr& call = *stmt.expr;
  ASSIGN_OR_RETURN(Value callee, Eval(*call.items[0], scope));
  ASSIGN_OR_RETURN(CallArgs args, EvalArgs(call.args, scope));
  args.keyword.emplace_back("caller", std::move(caller));
  ASSIGN_OR_RETURN(Value result, CallFunction(callee, args, "call block target"));
  return WriteValue(result);
}

Status Interpreter::ExecFilterBlock(const Stmt& stmt, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(std::string text, Capture(stmt.body, scope));
  Value base = Value::String(std::move(text));
  ASSIGN_OR_RETURN(Value result, EvalFilter(*stmt.expr, scope, &base));
  return WriteValue(result);
}

}  // namespace surge::jinja::internal
