#include "server/constraint_compile.h"

#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <utility>

#include "engine/constraint/compile_budget.h"
#include "server/request_trace.h"

namespace surge {
namespace {

ConstraintSpec ToConstraintSpec(const api::OutputConstraint& constraint) {
  ConstraintSpec spec;
  switch (constraint.kind) {
    case api::OutputConstraintKind::kNone:
    case api::OutputConstraintKind::kJsonObject: spec.kind = ConstraintKind::kJsonObject; break;
    case api::OutputConstraintKind::kJsonSchema: spec.kind = ConstraintKind::kJsonSchema; break;
    case api::OutputConstraintKind::kRegex: spec.kind = ConstraintKind::kRegex; break;
    case api::OutputConstraintKind::kChoice: spec.kind = ConstraintKind::kChoice; break;
    case api::OutputConstraintKind::kGrammar: spec.kind = ConstraintKind::kGrammar; break;
  }
  spec.text = constraint.text;
  spec.choices = constraint.choices;
  return spec;
}

// The compile's wall-clock limit: the server's, or the request's own timeout when sooner.
double CompileLimitSeconds(const ServerContext& context, double timeout_s) {
  const double server_s = context.options.constraint_compile_timeout_s;
  if (timeout_s > 0 && (server_s <= 0 || timeout_s < server_s)) return timeout_s;
  return server_s;
}

// A compile error is a 400 on the field the constraint came from, in the compiler's words
// ("json_schema: keyword 'not' is not supported (at #/properties/x)").
api::ApiError CompileError(const api::OutputConstraint& constraint, const Status& status, double limit_s) {
  if (status.code() != StatusCode::kDeadlineExceeded) {
    return api::InvalidParam(constraint.param, std::string(status.message()));
  }
  std::ostringstream message;
  message << constraint.param << ": compiling this output constraint took longer than " << limit_s
          << " s (the server's --constraint-compile-timeout, or the request's timeout); simplify it";
  return api::InvalidParam(constraint.param, message.str());
}

// What the compile thread needs; shared with the writer's close callback (cancel).
struct PendingCompile {
  PendingCompile(ServerContext& context, api::OutputConstraint constraint, std::string endpoint,
                 std::shared_ptr<net::ResponseWriter> writer, ConstraintThen then, double limit_s,
                 CompileBudget::Clock::time_point deadline, std::shared_ptr<RequestTrace> trace)
      : context(context), constraint(std::move(constraint)), endpoint(std::move(endpoint)), writer(std::move(writer)),
        then(std::move(then)), limit_s(limit_s), deadline(deadline), trace(std::move(trace)) {}

  ServerContext& context;
  api::OutputConstraint constraint;
  std::string endpoint;
  std::shared_ptr<net::ResponseWriter> writer;
  ConstraintThen then;
  double limit_s = 0;  // 0: no deadline
  CompileBudget::Clock::time_point deadline;
  std::shared_ptr<RequestTrace> trace;
  std::atomic<bool> cancelled{false};
};

void Finish(const std::shared_ptr<PendingCompile>& pending, ConstraintCache::Compiled compiled) {
  ServerContext& context = pending->context;
  auto task = [pending, compiled = std::move(compiled)]() mutable {
    ScopedRequestTrace scope(pending->trace);
    if (!compiled.ok()) {
      return pending->context.ReplyError(*pending->writer, pending->endpoint,
                                         CompileError(pending->constraint, compiled.status(), pending->limit_s));
    }
    pending->then(*std::move(compiled));
  };
  if (!context.runner.Post(std::move(task))) {
    context.ReplyError(*pending->writer, pending->endpoint, {UnavailableError("the server is shutting down"), "", ""});
  }
}

void CompileOnCompileThread(const std::shared_ptr<PendingCompile>& pending) {
  ServerContext& context = pending->context;
  CompileBudget budget(context.constraints.limits().max_compile_steps);
  if (pending->limit_s > 0) budget.set_deadline(pending->deadline);
  budget.set_cancel_flag(&pending->cancelled);
  bool joined = false;  // an identical constraint was being compiled: its outcome is ours
  ConstraintCache::Compiled compiled =
      context.constraints.Compile(ToConstraintSpec(pending->constraint), &budget, &joined);
  if (!compiled.ok() && compiled.status().code() == StatusCode::kCancelled) {
    context.metrics.CountConstraintCompile("cancelled");
    return;  // the client went away: nobody to answer
  }
  if (joined) {
    context.metrics.CountConstraintCompile(compiled.ok() ? "joined" : "joined_failure");
  } else {
    context.metrics.CountConstraintCompile(compiled.ok() ? "compiled" : "failed");
  }
  context.metrics.SetConstraintCacheBytes(context.constraints.bytes());
  Finish(pending, std::move(compiled));
}

}  // namespace

void WithOutputConstraint(ServerContext& context, const api::OutputConstraint& constraint, double timeout_s,
                          std::string_view endpoint, const std::shared_ptr<net::ResponseWriter>& writer,
                          ConstraintThen then) {
  if (constraint.kind == api::OutputConstraintKind::kNone) return then(nullptr);
  const double limit_s = CompileLimitSeconds(context, timeout_s);
  if (std::optional<ConstraintCache::Compiled> cached = context.constraints.Lookup(ToConstraintSpec(constraint))) {
    context.metrics.CountConstraintCompile(cached->ok() ? "cache_hit" : "cache_hit_failure");
    if (!cached->ok()) return context.ReplyError(*writer, endpoint, CompileError(constraint, cached->status(), limit_s));
    return then(**std::move(cached));
  }
  const auto deadline = CompileBudget::Clock::now() + std::chrono::duration_cast<CompileBudget::Clock::duration>(
                                                          std::chrono::duration<double>(limit_s));
  auto pending = std::make_shared<PendingCompile>(context, constraint, std::string(endpoint), writer, std::move(then),
                                                  limit_s, deadline, CurrentRequestTrace());
  writer->OnClose([weak = std::weak_ptr<PendingCompile>(pending)] {
    if (auto alive = weak.lock()) alive->cancelled = true;
  });
  if (!context.compile_runner.Post([pending] { CompileOnCompileThread(pending); })) {
    context.ReplyError(*writer, endpoint, {UnavailableError("the server is shutting down"), "", ""});
  }
}

}  // namespace surge
