// The key contract of cache-aware routing, against a real `surge serve` on stories260K
// (spawned from SURGE_BINARY): the block hashes the router computes from a request (same
// tokenizer, chat template, block size and seed, learnt from GET /kv_config) are exactly
// the ones the engine's KV events report it stored; and a precise-mode index fed by the
// events stays equal to the engine's cache through evictions.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "net/http_client.h"
#include "router/prefix/block_index.h"
#include "router/prefix/kv_event_subscriber.h"
#include "router/prefix/prompt_hasher.h"

extern char** environ;

namespace surge::router {
namespace {

constexpr char kTemplate[] = "tests/data/chat_template_simple.jinja";

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// `surge serve` on a free port with a small KV cache (evictions come soon), stopped with
// SIGTERM. Its stdout is read up to the ready line, which names the URL.
class Server {
 public:
  bool Start() {
    int out[2];
    if (pipe(out) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args{SURGE_BINARY, "serve", "models/stories260K", "--host", "127.0.0.1", "--port", "0",
                                  "--chat-template", kTemplate, "--threads", "1", "--block-size", "8",
                                  "--kv-cache-memory", "300KiB"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int spawned = posix_spawn(&pid_, SURGE_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (spawned != 0) return false;
    stdout_ = fdopen(out[0], "r");
    char line[4096];
    while (std::fgets(line, sizeof line, stdout_) != nullptr) {
      const std::string text = line;
      const size_t at = text.find("ready on ");
      if (at == std::string::npos) continue;
      const size_t end = text.find(' ', at + 9);
      url_ = text.substr(at + 9, end - at - 9);
      return true;
    }
    return false;
  }

  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (stdout_ != nullptr) std::fclose(stdout_);
  }

  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  std::string url_;
};

// The stored hashes the subscriber has seen, in order.
class StoredLog {
 public:
  void Add(const KvEventBatch& batch) {
    std::lock_guard lock(mu_);
    ++num_batches_;
    for (const KvEventRun& run : batch.events) {
      if (run.type != KvEventRun::Type::kStored || batch.snapshot) continue;
      stored_.insert(stored_.end(), run.block_hashes.begin(), run.block_hashes.end());
    }
  }
  // Waits (up to 10 s) until at least `num` hashes were stored; all of them.
  std::vector<uint64_t> WaitFor(size_t num) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard lock(mu_);
        if (stored_.size() >= num) return stored_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mu_);
    return stored_;
  }
  int64_t num_batches() {
    std::lock_guard lock(mu_);
    return num_batches_;
  }

 private:
  std::mutex mu_;
  std::vector<uint64_t> stored_;
  int64_t num_batches_ = 0;
};

class CacheAwareServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start()) << "surge serve did not start";
    auto config_body = net::Fetch("GET", server_.url() + "/kv_config");
    ASSERT_TRUE(config_body.ok()) << config_body.status().ToString();
    ASSERT_EQ(config_body->status, 200) << config_body->body;
    auto config = ParseKvConfig(config_body->body);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    config_ = *config;
    EXPECT_EQ(config_.block_size, 8);
    auto tokenizer = Tokenizer::FromDirectory("models/stories260K");
    ASSERT_TRUE(tokenizer.ok());
    tokenizer_ = std::move(tokenizer).value();
    auto hasher = PromptHasher::Create(*tokenizer_, ReadFile(kTemplate), config_);
    ASSERT_TRUE(hasher.ok()) << hasher.status().ToString();
    hasher_.emplace(std::move(hasher).value());
    index_ = std::make_unique<BlockIndex>(static_cast<size_t>(config_.num_total_blocks));
    subscriber_ = std::make_unique<KvEventSubscriber>(server_.url(), *index_, KvEventSubscriberOptions{},
                                                      [this](const KvEventBatch& batch) { log_.Add(batch); });
    subscriber_->Start();
    for (int i = 0; i < 500 && log_.num_batches() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(log_.num_batches(), 1) << "no snapshot from /kv_events";
  }

  // Sends the request (one token out, so the engine files exactly the prompt's full
  // blocks) and returns the router's hashes for it.
  std::vector<uint64_t> Send(const std::string& path, const std::string& body) {
    auto hashes = hasher_->PromptBlockHashes(path, body);
    EXPECT_TRUE(hashes.ok()) << hashes.status().ToString();
    auto response = net::Fetch("POST", server_.url() + path, body, {{"Content-Type", "application/json"}});
    EXPECT_TRUE(response.ok() && response->status == 200) << (response.ok() ? response->body : "");
    return hashes.ok() ? *hashes : std::vector<uint64_t>{};
  }

  Server server_;
  KvConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::optional<PromptHasher> hasher_;
  std::unique_ptr<BlockIndex> index_;
  StoredLog log_;
  std::unique_ptr<KvEventSubscriber> subscriber_;
};

std::string CompletionBody(const std::string& prompt) {
  return R"({"model":"stories260K","max_tokens":1,"temperature":0,"prompt":")" + prompt + R"("})";
}

std::string ChatBody(const std::string& system, const std::string& user) {
  return R"({"model":"stories260K","max_tokens":1,"temperature":0,"messages":[{"role":"system","content":")" +
         system + R"("},{"role":"user","content":")" + user + R"("}]})";
}

TEST_F(CacheAwareServeTest, RouterHashesEqualTheEnginesStoredHashes) {
  // A fresh prompt: the engine stores exactly the router's hashes, in chain order.
  const std::vector<uint64_t> first =
      Send("/v1/completions", CompletionBody("Once upon a time, there was a little girl named Lily who loved the sun."));
  ASSERT_GE(first.size(), 2u);
  EXPECT_EQ(log_.WaitFor(first.size()), first);
  // A chat shares nothing with it: again exactly the router's hashes.
  const std::vector<uint64_t> chat = Send("/v1/chat/completions", ChatBody("You tell short stories.", "A dog and a cat"));
  ASSERT_GE(chat.size(), 2u);
  std::vector<uint64_t> expected = first;
  expected.insert(expected.end(), chat.begin(), chat.end());
  EXPECT_EQ(log_.WaitFor(expected.size()), expected);
  // The same system prompt, another question: only the blocks after the shared prefix
  // are new, and the router's index already holds the shared ones.
  const std::string body = ChatBody("You tell short stories.", "A bird in a tree");
  auto next = hasher_->PromptBlockHashes("/v1/chat/completions", body);
  ASSERT_TRUE(next.ok());
  const int32_t num_shared = index_->NumLeadingCached(*next);
  EXPECT_GE(num_shared, 1);
  EXPECT_LT(num_shared, static_cast<int32_t>(next->size()));
  Send("/v1/chat/completions", body);
  expected.insert(expected.end(), next->begin() + num_shared, next->end());
  EXPECT_EQ(log_.WaitFor(expected.size()), expected);
  EXPECT_EQ(index_->NumLeadingCached(*next), static_cast<int32_t>(next->size()));
}

// Many distinct prompts through a small cache: blocks are evicted, and the precise index
// still equals the engine's cache -- as a second subscriber's snapshot shows it.
TEST_F(CacheAwareServeTest, PreciseIndexTracksTheCacheThroughEvictions) {
  const char* kWords[] = {"apple", "river", "dragon", "castle", "ocean", "forest", "rocket", "garden"};
  std::vector<std::vector<uint64_t>> sent;
  for (int i = 0; i < 24; ++i) {
    const std::string prompt = std::string("Story ") + std::to_string(i) + " about a " + kWords[i % 8] + " and a " +
                               kWords[(i * 3 + 1) % 8] + " that went far away to find a friend.";
    sent.push_back(Send("/v1/completions", CompletionBody(prompt)));
  }
  // The engine holds fewer blocks than were sent: some were evicted.
  size_t num_sent = 0;
  for (const auto& hashes : sent) num_sent += hashes.size();
  ASSERT_GT(num_sent, static_cast<size_t>(config_.num_total_blocks));
  BlockIndex fresh(static_cast<size_t>(config_.num_total_blocks));
  StoredLog fresh_log;
  KvEventSubscriber second(server_.url(), fresh, {}, [&](const KvEventBatch& batch) { fresh_log.Add(batch); });
  second.Start();
  for (int i = 0; i < 500 && fresh_log.num_batches() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(fresh_log.num_batches(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the first one catch up too
  EXPECT_LE(fresh.size(), static_cast<size_t>(config_.num_total_blocks));
  EXPECT_EQ(index_->size(), fresh.size());
  EXPECT_EQ(index_->num_gaps(), 0);
  for (const auto& hashes : sent) {
    EXPECT_EQ(index_->NumLeadingCached(hashes), fresh.NumLeadingCached(hashes));
  }
  // The last prompt was just computed: it is cached whole.
  EXPECT_EQ(index_->NumLeadingCached(sent.back()), static_cast<int32_t>(sent.back().size()));
}

}  // namespace
}  // namespace surge::router
