// Dataset workloads: ShareGPT-format JSON (first human turn as the prompt, the answer's
// length as the output length) and JSONL files of request bodies sent as they are.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "bench/rng.h"
#include "bench/workload.h"

namespace surge::bench {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kRoundStride = 1'000'003;  // a prime: rounds start at unrelated entries

int64_t CountWords(const std::string& text) {
  int64_t num_words = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!space && !in_word) ++num_words;
    in_word = !space;
  }
  return num_words;
}

int64_t EstimateTokens(const std::string& text, double tokens_per_word) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(CountWords(text)) * tokens_per_word));
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("--dataset: cannot read " + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Entries in a seeded shuffled order; session i of round r takes entry (r * stride + i) mod n.
class DatasetWorkload : public Workload {
 public:
  DatasetWorkload(const WorkloadConfig& config, std::vector<Session> entries)
      : config_(config), entries_(std::move(entries)) {
    Rng rng(config.seed);
    for (size_t i = entries_.size(); i > 1; --i) {
      std::swap(entries_[i - 1], entries_[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(i) - 1))]);
    }
  }

  Session MakeSession(uint64_t round_key, int64_t index) const override {
    uint64_t slot = (round_key * kRoundStride + static_cast<uint64_t>(index)) % entries_.size();
    Session session = entries_[slot];
    if (config_.output_len_set) {
      Rng rng(MixSeed(config_.seed, round_key, static_cast<uint64_t>(index)));
      session.turns[0].max_tokens = DrawLength(rng, config_.output);
    }
    return session;
  }

 private:
  WorkloadConfig config_;
  std::vector<Session> entries_;
};

const std::string* FindTurn(const Json& conversation, size_t start, std::initializer_list<const char*> roles,
                            size_t* found_at) {
  for (size_t i = start; i < conversation.size(); ++i) {
    const Json& turn = conversation[i];
    if (!turn.is_object() || !turn.contains("value") || !turn["value"].is_string()) continue;
    std::string from = turn.value("from", "");
    for (const char* role : roles) {
      if (from == role) {
        *found_at = i;
        return turn["value"].get_ptr<const std::string*>();
      }
    }
  }
  return nullptr;
}

}  // namespace

StatusOr<std::unique_ptr<Workload>> LoadShareGptWorkload(const WorkloadConfig& config) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(config.dataset_path));
  Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_array()) {
    return InvalidArgumentError("--dataset " + config.dataset_path + ": not a ShareGPT JSON array");
  }
  std::vector<Session> entries;
  for (const Json& item : root) {
    if (!item.is_object() || !item.contains("conversations") || !item["conversations"].is_array()) continue;
    const Json& conversation = item["conversations"];
    size_t at = 0;
    const std::string* prompt = FindTurn(conversation, 0, {"human", "user"}, &at);
    if (prompt == nullptr || prompt->empty()) continue;
    const std::string* answer = FindTurn(conversation, at + 1, {"gpt", "assistant", "chatgpt"}, &at);
    Session session;
    Turn turn{*prompt, 0, EstimateTokens(*prompt, config.tokens_per_word)};
    turn.max_tokens = answer ? EstimateTokens(*answer, config.tokens_per_word) : config.output.mean_tokens;
    session.turns.push_back(std::move(turn));
    entries.push_back(std::move(session));
  }
  if (entries.empty()) {
    return InvalidArgumentError("--dataset " + config.dataset_path + ": no conversation with a human turn");
  }
  return std::unique_ptr<Workload>(std::make_unique<DatasetWorkload>(config, std::move(entries)));
}

StatusOr<std::unique_ptr<Workload>> LoadJsonlWorkload(const WorkloadConfig& config) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(config.dataset_path));
  std::vector<Session> entries;
  std::istringstream lines(text);
  std::string line;
  for (int line_number = 1; std::getline(lines, line); ++line_number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json body = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    bool chat = body.is_object() && body.contains("messages") && body["messages"].is_array();
    bool completion = body.is_object() && body.contains("prompt");
    if (!chat && !completion) {
      return InvalidArgumentError("--dataset " + config.dataset_path + ":" + std::to_string(line_number) +
                                  ": expected a JSON object with \"prompt\" or \"messages\"");
    }
    std::string prompt_text;
    if (chat) {
      for (const Json& message : body["messages"]) {
        if (message.is_object() && message.contains("content") && message["content"].is_string()) {
          prompt_text += message["content"].get<std::string>() + " ";
        }
      }
    } else if (body["prompt"].is_string()) {
      prompt_text = body["prompt"].get<std::string>();
    }
    Session session;
    session.raw_body = line;
    session.turns.push_back(Turn{"", 0, EstimateTokens(prompt_text, config.tokens_per_word)});
    entries.push_back(std::move(session));
  }
  if (entries.empty()) return InvalidArgumentError("--dataset " + config.dataset_path + ": no request bodies");
  return std::unique_ptr<Workload>(std::make_unique<DatasetWorkload>(config, std::move(entries)));
}

}  // namespace surge::bench
