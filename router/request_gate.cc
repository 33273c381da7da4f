#include "router/request_gate.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "api/error.h"
#include "net/sse.h"
#include "router/auth/token_estimate.h"
#include "router/tiers/tier.h"

namespace surge::router {
namespace {

GateRefusal FromReply(const api::ErrorReply& reply, net::HttpHeaders headers = {}) {
  headers.Set("content-type", "application/json");
  return {reply.http_status, reply.body, std::move(headers)};
}

net::HttpHeaders ToHeaders(const std::vector<std::pair<std::string, std::string>>& pairs) {
  net::HttpHeaders headers;
  for (const auto& [name, value] : pairs) headers.Set(name, value);
  return headers;
}

}  // namespace

StatusOr<std::unique_ptr<RequestGate>> RequestGate::Create(const RouteConfig& config, ApiKeyStore keys,
                                                           obs::Registry* registry) {
  std::unique_ptr<RequestGate> gate(new RequestGate(config, std::move(keys)));
  if (!config.tiers) return gate;
  const TiersConfig& tiers = *config.tiers;
  for (const std::string& pool : tiers.borrow.pools) {
    if (!config.pools.count(pool)) {
      return InvalidArgumentError("config key 'tiers.pools' names pool '" + pool +
                                  "', which is not declared (--pool NAME or config key 'pools')");
    }
  }
  TtftWindowOptions window = tiers.window;
  window.now_ms = SteadyNowMs;
  gate->window_ = std::make_unique<TtftWindow>(window);
  gate->borrow_ = std::make_unique<BorrowPolicy>(tiers.borrow, gate->window_.get());
  for (const std::string& pool : gate->borrow_->PoolNames()) {
    TierAdmissionOptions admission = tiers.admission;
    admission.now_ms = SteadyNowMs;
    admission.num_slots = 0;  // set from the pool's routable backends at each Admit
    gate->admissions_.emplace(pool, std::make_unique<TierAdmission>(admission));
  }
  gate->metrics_ = std::make_unique<TierMetrics>(registry);
  return gate;
}

RequestGate::RequestGate(const RouteConfig& config, ApiKeyStore keys)
    : config_(config), keys_(std::move(keys)), limiter_(SteadyNowMs) {}

std::optional<GateRefusal> RequestGate::Check(const net::HttpRequest& request, nlohmann::json* body, bool generates,
                                              GatePass* pass, bool* body_changed) {
  *body_changed = false;
  if (!keys_.open()) {
    const std::string* authorization = request.headers.Find("authorization");
    AuthDecision auth = keys_.Authenticate(authorization != nullptr ? *authorization : std::string());
    if (!auth.ok()) return FromReply(AuthErrorReply(auth), {{"www-authenticate", "Bearer"}});
    pass->key = auth.key;
  }
  const std::string* header = request.headers.Find(kPriorityHeader);
  static const nlohmann::json kNoBody = nlohmann::json::object();
  const nlohmann::json& object = body->is_object() ? *body : kNoBody;
  api::ApiResult<Tier> tier = ResolveTier(header != nullptr ? *header : std::string(), object,
                                          pass->key != nullptr ? std::optional<Tier>(pass->key->tier) : std::nullopt);
  if (!tier.ok()) return FromReply(api::MakeErrorReply(tier.error()));
  pass->tier = *tier;
  // The engine defaults to normal: forwarding matters (and costs a re-serialization) only
  // for the other tiers.
  if (body->is_object() && pass->tier != Tier::kNormal) *body_changed = ForwardTier(pass->tier, body);
  const KeyLimits* limits = pass->key != nullptr ? &pass->key->limits : nullptr;
  if (limits == nullptr || (limits->requests_per_minute == 0 && limits->tokens_per_minute == 0)) {
    return std::nullopt;  // nothing to count: skip the estimate (the open router's hot path)
  }
  const int64_t estimate = limits->tokens_per_minute > 0 ? EstimateRequestTokens(object, generates) : 0;
  pass->limit = limiter_.Acquire(pass->key, estimate);
  pass->headers = ToHeaders(RateLimitHeaders(pass->limit));
  if (!pass->limit.allowed) return FromReply(RateLimitErrorReply(pass->limit), pass->headers);
  return std::nullopt;
}

std::optional<GateRefusal> RequestGate::CheckAdmin(const net::HttpRequest& request) const {
  if (keys_.open()) return std::nullopt;
  const std::string* authorization = request.headers.Find("authorization");
  AuthDecision auth = keys_.Authenticate(authorization != nullptr ? *authorization : std::string());
  if (!auth.ok()) return FromReply(AuthErrorReply(auth), {{"www-authenticate", "Bearer"}});
  if (auth.key->admin) return std::nullopt;
  return GateRefusal{403, net::ErrorJson(403, "this API key is not an admin key (\"admin\": true in the keys file)"),
                     {{"content-type", "application/json"}}};
}

TierAdmission* RequestGate::AdmissionFor(const std::string& pool) {
  auto it = admissions_.find(pool);
  return it == admissions_.end() ? nullptr : it->second.get();
}

// The tier's own pool unless it borrows; then the first pool of its list with a free slot,
// else the one whose queue for this tier is shortest. A pool with no routable backend is
// skipped; when none of the tier's pools has one (an outage, not slowness), the pools of
// the less urgent tiers are tried too. "" when no pool can take it at all.
std::string RequestGate::PickTierPool(Tier tier, const BackendSet& backends) {
  std::vector<std::string> pools = borrow_->PoolsFor(tier);
  for (int t = TierIndex(tier) + 1; t < kNumTiers; ++t) {
    const std::string& lower = config_.tiers->borrow.pools[t];
    if (std::find(pools.begin(), pools.end(), lower) == pools.end()) pools.push_back(lower);
  }
  const size_t num_preferred = borrow_->PoolsFor(tier).size();
  const int64_t now_ms = SteadyNowMs();
  std::string best;
  int32_t best_depth = INT32_MAX;
  for (size_t i = 0; i < pools.size(); ++i) {
    if (i == num_preferred && !best.empty()) break;  // the outage fallback only when nothing preferred serves
    TierAdmission* admission = AdmissionFor(pools[i]);
    const int32_t capacity = static_cast<int32_t>(backends.NumRoutableInPool(pools[i], now_ms) *
                                                  config_.policy_options.backend_capacity);
    if (admission->num_slots() != capacity) admission->SetNumSlots(capacity);
    if (capacity == 0) continue;
    if (admission->num_in_use() < capacity) return pools[i];
    if (admission->QueueDepth(tier) < best_depth) {
      best = pools[i];
      best_depth = admission->QueueDepth(tier);
    }
  }
  return best;
}

RequestGate::PoolChoice RequestGate::ChoosePool(Tier tier, const std::string& model_pool, const BackendSet& backends) {
  if (!tiers_on()) return {model_pool};
  PoolChoice result{PickTierPool(tier, backends)};
  if (result.pool.empty()) {
    result.pool = borrow_->PoolsFor(tier).front();
    result.refusal = FromReply(api::MakeErrorReply(UnavailableError(
        std::string("no routable backend for the ") + TierName(tier) + " tier (pool '" + result.pool + "')")));
  }
  return result;
}

RequestGate::Admission RequestGate::Admit(Tier tier, const std::string& pool, TierAdmission::AdmitCallback on_admitted) {
  if (!tiers_on()) return {};
  Admission result;
  TierAdmission::AdmitResult admitted = AdmissionFor(pool)->Admit(tier, std::move(on_admitted));
  if (!admitted.status.ok()) {
    net::HttpHeaders headers{{"retry-after", std::to_string(admitted.retry_after_s)}};
    result.refusal = FromReply(api::MakeErrorReply(ResourceExhaustedError(
                                   std::string("the ") + TierName(tier) + " queue of pool '" + pool +
                                   "' is full; retry after " + std::to_string(admitted.retry_after_s) + " s")),
                               std::move(headers));
    return result;
  }
  result.ticket = admitted.ticket;
  result.admitted = admitted.admitted;
  return result;
}

bool RequestGate::Cancel(const std::string& pool, TicketId ticket) {
  TierAdmission* admission = AdmissionFor(pool);
  return admission != nullptr && admission->Cancel(ticket);
}

void RequestGate::Finish(const GatePass& pass, const std::string& pool, TicketId ticket, int64_t actual_tokens,
                         double ttft_ms) {
  limiter_.Settle(pass.limit, actual_tokens);
  if (!tiers_on()) return;
  if (ticket != kNoTicket) AdmissionFor(pool)->Release(ticket);
  if (ttft_ms >= 0) {
    window_->Add(pass.tier, ttft_ms);
    metrics_->ObserveTtft(pass.tier, ttft_ms);
  }
}

void RequestGate::RefreshMetrics() {
  if (!tiers_on()) return;
  for (const auto& [pool, admission] : admissions_) metrics_->Refresh(pool, *admission);
  metrics_->Refresh(*window_, *borrow_);
}

bool RequestGate::NeedsCapacity(const std::string& pool) { return tiers_on() && borrow_->NeedsCapacity(pool); }

}  // namespace surge::router
