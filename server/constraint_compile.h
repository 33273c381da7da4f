// The request's output constraint (response_format, guided_*, text.format, tool_choice)
// compiled off the request workers: a grammar that takes long to compile holds one of the
// context's compile threads (bounded by its deadline), never a thread that serves others.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "api/output_constraint.h"
#include "engine/constraint/compiled_grammar.h"
#include "server/server_context.h"

namespace surge {

using ConstraintThen = std::function<void(std::shared_ptr<const CompiledGrammar>)>;

// Calls `then` on a worker thread with `constraint` compiled (null: none). A cached grammar
// or failure answers at once, on this thread; otherwise the compile runs on the context's
// compile threads under the deadline of --constraint-compile-timeout (or `timeout_s`, the
// request's own, when sooner; 0: none), cancelled when the client goes away, and `then`
// is posted back to the workers. A failure is answered here: 400 on the constraint's field
// in the compiler's words (a deadline: "... took longer than N s").
void WithOutputConstraint(ServerContext& context, const api::OutputConstraint& constraint, double timeout_s,
                          std::string_view endpoint, const std::shared_ptr<net::ResponseWriter>& writer,
                          ConstraintThen then);

}  // namespace surge
