// The `cache-aware` policy (router/prefix/README.md): the prompt's block hashes, computed with
// the engines' tokenizer, chat template, block size and seed, scored against a per-backend
// index of the blocks each engine holds. Approximate mode records what this router sent
// where; precise mode follows each engine's GET /kv_events. Each backend's GET /kv_config is
// fetched once, in the background, when the policy first sees it: until it answers, that
// backend scores 0 (its cache is unknown), and until any answers, the policy is least-load.
#include <mutex>
#include <random>
#include <unordered_map>

#include "base/logging.h"
#include "base/mapped_file.h"
#include "net/http_client.h"
#include "router/policy.h"
#include "router/prefix/block_index.h"
#include "router/prefix/cache_aware.h"
#include "router/prefix/kv_event_subscriber.h"
#include "router/prefix/kv_events.h"
#include "router/prefix/prompt_hasher.h"
#include "tokenizer/tokenizer.h"

namespace surge::router {
namespace {

constexpr int64_t kKvConfigRetryMs = 2'000;

struct BackendCache {
  std::string url;
  std::weak_ptr<const Backend> backend;  // where refused answers are counted
  bool fetching = false;
  int64_t retry_at_ms = 0;
  std::unique_ptr<BlockIndex> index;  // null until its /kv_config arrived (and matched)
  std::unique_ptr<KvEventSubscriber> subscriber;  // precise mode
};

class CacheAwarePolicy final : public Policy {
 public:
  CacheAwarePolicy(std::unique_ptr<Tokenizer> tokenizer, std::string chat_template, PolicyOptions options)
      : tokenizer_(std::move(tokenizer)),
        chat_template_(std::move(chat_template)),
        options_(std::move(options)),
        rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

  ~CacheAwarePolicy() override {
    client_.reset();  // no kv_config callback runs after this
    std::lock_guard lock(mu_);
    backends_.clear();  // subscribers stop before their indexes go
  }

  std::string_view name() const override { return "cache-aware"; }

  PickResult Pick(const RouteRequest& request, std::span<const Candidate> candidates) override {
    const PromptHasher* hasher = LearnBackends(candidates);
    if (hasher == nullptr) return LeastLoad(candidates, "no_kv_config");
    StatusOr<std::vector<uint64_t>> hashes = hasher->PromptBlockHashes(request.path, request.raw_body);
    if (!hashes.ok()) return LeastLoad(candidates, "no_prompt");
    std::vector<CacheAwareBackend> scored;
    scored.reserve(candidates.size());
    std::lock_guard lock(mu_);
    for (const Candidate& c : candidates) {
      auto it = backends_.find(c.backend_id);
      const BlockIndex* index = it == backends_.end() ? nullptr : it->second.index.get();
      scored.push_back({index, ReportedRequests(c.load), c.num_in_flight});
    }
    const CacheAwareOptions pick_options{options_.balance_abs_threshold, options_.balance_rel_threshold};
    const CacheAwareDecision decision = CacheAwarePick(*hashes, scored, pick_options, rng_);
    const size_t chosen = static_cast<size_t>(decision.backend);
    if (BlockIndex* index = backends_[candidates[chosen].backend_id].index.get()) index->RecordRequest(*hashes);
    PickResult result{chosen, decision.balance_fallback ? "balance_fallback" : "cache"};
    result.num_prompt_blocks = static_cast<int64_t>(hashes->size());
    result.num_cached_blocks = decision.num_cached_blocks;
    return result;
  }

  void OnBackendRemoved(int32_t backend_id) override {
    std::unique_ptr<KvEventSubscriber> subscriber;
    std::unique_ptr<BlockIndex> index;
    {
      std::lock_guard lock(mu_);
      auto it = backends_.find(backend_id);
      if (it == backends_.end()) return;
      subscriber = std::move(it->second.subscriber);
      index = std::move(it->second.index);
      backends_.erase(it);
    }
    subscriber.reset();  // stopped (outside the lock: it joins its stream) before its index goes
  }

 private:
  PickResult LeastLoad(std::span<const Candidate> candidates, std::string_view why) {
    std::vector<CacheAwareBackend> scored;
    for (const Candidate& c : candidates) scored.push_back({nullptr, ReportedRequests(c.load), c.num_in_flight});
    std::lock_guard lock(mu_);
    const CacheAwareDecision decision = CacheAwarePick({}, scored, {}, rng_);
    return {static_cast<size_t>(decision.backend), why};
  }

  // Starts a /kv_config fetch for every candidate not known yet; the hasher once any answered.
  const PromptHasher* LearnBackends(std::span<const Candidate> candidates) {
    const int64_t now_ms = SteadyNowMs();
    std::lock_guard lock(mu_);
    for (const Candidate& c : candidates) {
      BackendCache& cache = backends_[c.backend_id];
      if (cache.index || cache.fetching || now_ms < cache.retry_at_ms) continue;
      cache.url = std::string(c.url);
      if (c.backend != nullptr) cache.backend = c.backend->weak_from_this();
      cache.fetching = true;
      FetchKvConfig(c.backend_id, cache.url);
    }
    return hasher_ ? &*hasher_ : nullptr;
  }

  void FetchKvConfig(int32_t backend_id, const std::string& url) {
    net::ClientRequest request;
    request.url = url + "/kv_config";
    request.timeout_ms = 5'000;
    net::ClientCallbacks callbacks;
    callbacks.on_done = [this, backend_id, url](net::ClientResult result) {
      const bool answered = result.status.ok() && result.response.status == 200;
      StatusOr<KvConfig> config =
          answered ? ParseKvConfig(result.response.body) : StatusOr<KvConfig>(UnavailableError("GET /kv_config failed"));
      OnKvConfig(backend_id, url, std::move(config), answered);
    };
    client_->Send(std::move(request), std::move(callbacks));
  }

  // `answered`: the engine answered 200, so a config that is not ok is a refused answer.
  void OnKvConfig(int32_t backend_id, const std::string& url, StatusOr<KvConfig> config, bool answered) {
    std::lock_guard lock(mu_);
    auto it = backends_.find(backend_id);
    if (it == backends_.end()) return;  // removed meanwhile
    BackendCache& cache = it->second;
    cache.fetching = false;
    if (config.ok() && !hasher_) config = CreateHasher(*config);
    if (config.ok() && (config->block_size != hasher_->config().block_size ||
                        config->hash_seed != hasher_->config().hash_seed)) {
      config = InvalidArgumentError("its block size or hash seed differs from the pool's first backend's");
    }
    if (!config.ok()) {
      LOG(WARNING) << "cache-aware: " << url << ": " << config.status().message()
                         << "; its cache is treated as unknown, retrying";
      if (auto backend = cache.backend.lock(); answered && backend) {
        backend->RefuseAnswer(BackendAnswer::kKvConfig, config.status());
      }
      cache.retry_at_ms = SteadyNowMs() + kKvConfigRetryMs;
      return;
    }
    cache.index = std::make_unique<BlockIndex>(static_cast<size_t>(std::max<int64_t>(1, config->num_total_blocks)));
    if (options_.cache_mode == "precise") {
      KvEventSubscriberOptions subscriber_options;
      subscriber_options.on_refused = [backend = cache.backend](const Status& why) {
        if (auto counted = backend.lock()) counted->RefuseAnswer(BackendAnswer::kKvEvents, why);
      };
      cache.subscriber = std::make_unique<KvEventSubscriber>(url, *cache.index, std::move(subscriber_options));
      cache.subscriber->Start();
    }
  }

  StatusOr<KvConfig> CreateHasher(const KvConfig& config) {
    StatusOr<PromptHasher> hasher = PromptHasher::Create(*tokenizer_, chat_template_, config);
    if (!hasher.ok()) return hasher.status();
    hasher_.emplace(std::move(*hasher));
    return config;
  }

  const std::unique_ptr<Tokenizer> tokenizer_;
  const std::string chat_template_;
  const PolicyOptions options_;
  std::unique_ptr<net::HttpClient> client_ = std::make_unique<net::HttpClient>();
  std::mutex mu_;
  std::mt19937_64 rng_;                               // guarded by mu_
  std::optional<PromptHasher> hasher_;                // set once, under mu_; read after
  std::unordered_map<int32_t, BackendCache> backends_;  // guarded by mu_
};

}  // namespace

StatusOr<std::unique_ptr<Policy>> MakeCacheAwarePolicy(const PolicyOptions& options) {
  if (options.tokenizer.empty()) {
    return InvalidArgumentError(
        "policy cache-aware needs the engines' tokenizer: --tokenizer MODEL_DIR (or --spawn with --model)");
  }
  if (options.cache_mode != "approximate" && options.cache_mode != "precise") {
    return InvalidArgumentError("cache_mode '" + options.cache_mode + "' is not approximate or precise");
  }
  StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::FromDirectory(options.tokenizer);
  if (!tokenizer.ok()) return InvalidArgumentError("--tokenizer: " + tokenizer.status().message());
  std::string chat_template;
  if (!options.chat_template.empty()) {
    StatusOr<std::string> text = ReadFileToString(options.chat_template);
    if (!text.ok()) return InvalidArgumentError("--chat-template: " + text.status().message());
    chat_template = std::move(*text);
  }
  // A template that does not parse fails here, not on the first request.
  if (Status check = PromptHasher::Create(**tokenizer, chat_template, KvConfig{16, 0, 1}).status(); !check.ok()) {
    return InvalidArgumentError("--chat-template: " + check.message());
  }
  return std::unique_ptr<Policy>(
      std::make_unique<CacheAwarePolicy>(std::move(*tokenizer), std::move(chat_template), options));
}

}  // namespace surge::router
