#include "bench/testing/scripted_server.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>

#include "net/http_server.h"
#include "net/sse.h"

namespace surge::bench::testing {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Writer = std::shared_ptr<net::ResponseWriter>;

constexpr size_t kMaxBodies = 10'000;

// Runs tasks at their times on one thread (absolute times: delays never accumulate).
class Timer {
 public:
  Timer() : thread_([this] { Loop(); }) {}
  ~Timer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  void At(Clock::time_point when, std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push({when, next_++, std::move(task)});
    wake_.notify_one();
  }

 private:
  struct Task {
    Clock::time_point when;
    uint64_t order;
    std::function<void()> run;
    bool operator>(const Task& other) const { return when != other.when ? when > other.when : order > other.order; }
  };
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (tasks_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const Clock::time_point when = tasks_.top().when;  // a copy: At() may move the heap while we wait
      if (Clock::now() < when) {
        wake_.wait_until(lock, when);
        continue;
      }
      std::function<void()> run = tasks_.top().run;
      tasks_.pop();
      lock.unlock();
      run();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<Task, std::vector<Task>, std::greater<>> tasks_;
  uint64_t next_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

int64_t CountWords(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = c == ' ' || c == '\n' || c == '\t';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

// One streamed answer and its schedule.
struct Stream {
  Writer writer;
  bool chat = false;
  bool include_usage = false;
  int64_t num_tokens = 16;
  int64_t prompt_tokens = 0;
  Fault fault = Fault::kNone;
  Clock::time_point start;

  std::string Chunk(const std::string& text, bool role) const {
    Json choice = {{"index", 0}, {"finish_reason", nullptr}};
    if (chat) {
      choice["delta"] = role ? Json{{"role", "assistant"}, {"content", ""}} : Json{{"content", text}};
    } else {
      choice["text"] = text;
    }
    Json chunk = {{"id", "scripted"}, {"object", chat ? "chat.completion.chunk" : "text_completion"},
                  {"created", 0}, {"model", "scripted-model"}, {"choices", Json::array({choice})}};
    return net::EncodeSseData(chunk.dump());
  }
  std::string Ending() const {
    std::string out;
    if (include_usage) {
      Json usage = {{"prompt_tokens", prompt_tokens}, {"completion_tokens", num_tokens},
                    {"total_tokens", prompt_tokens + num_tokens}};
      out += net::EncodeSseData(Json{{"id", "scripted"}, {"choices", Json::array()}, {"usage", usage}}.dump());
    }
    if (fault != Fault::kNoDone) out += net::EncodeSseData("[DONE]");
    return out;
  }
};

}  // namespace

StatusOr<Fault> ParseFault(const std::string& name) {
  if (name == "none") return Fault::kNone;
  if (name == "http500") return Fault::kHttp500;
  if (name == "malformed") return Fault::kMalformedSse;
  if (name == "close") return Fault::kCloseMidStream;
  if (name == "nodone") return Fault::kNoDone;
  if (name == "stall") return Fault::kStall;
  return InvalidArgumentError("unknown fault '" + name + "' (none, http500, malformed, close, nodone, stall)");
}

class ScriptedServer::Impl {
 public:
  explicit Impl(StreamScript script) : script_(std::move(script)) {}

  Status Start(uint16_t port);
  void Stop();
  uint16_t port() const { return server_ ? server_->port() : 0; }
  int64_t num_generation_requests() const { return num_requests_.load(); }
  std::vector<std::string> bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  void Generate(const net::HttpRequest& request, Writer writer, bool chat);
  void Step(std::shared_ptr<Stream> stream, int64_t token);

  const StreamScript script_;
  std::unique_ptr<net::HttpServer> server_;
  std::unique_ptr<Timer> timer_;
  std::atomic<int64_t> num_requests_{0};
  mutable std::mutex mu_;
  std::vector<std::string> bodies_;  // guarded by mu_
  std::vector<Writer> stalled_;      // guarded by mu_; released at Stop
};

Status ScriptedServer::Impl::Start(uint16_t port) {
  timer_ = std::make_unique<Timer>();
  net::HttpServerOptions options;
  options.port = port;
  options.max_connections = 100'000;
  server_ = std::make_unique<net::HttpServer>(options);
  server_->Route("GET", "/v1/models", [](net::HttpRequest, Writer writer) {
    writer->SendJson(200, R"({"object":"list","data":[{"id":"scripted-model","object":"model"}]})");
  });
  // So that `surge route` can put it behind itself (its health checks).
  server_->Route("GET", "/health", [](net::HttpRequest, Writer writer) { writer->SendJson(200, "{}"); });
  if (script_.has_tokenize) {
    server_->Route("POST", "/tokenize", [this](net::HttpRequest request, Writer writer) {
      Json body = Json::parse(request.body, nullptr, false);
      std::string prompt = body.is_object() ? body.value("prompt", "") : "";
      int64_t count = 1 + static_cast<int64_t>(static_cast<double>(CountWords(prompt)) * script_.tokens_per_word);
      writer->SendJson(200, Json{{"count", count}, {"tokens", Json::array()}}.dump());
    });
  }
  server_->Route("POST", "/v1/completions",
                 [this](net::HttpRequest request, Writer writer) { Generate(request, std::move(writer), false); });
  server_->Route("POST", "/v1/chat/completions",
                 [this](net::HttpRequest request, Writer writer) { Generate(request, std::move(writer), true); });
  return server_->Start();
}

void ScriptedServer::Impl::Stop() {
  if (server_) server_->Stop();
  timer_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  stalled_.clear();
}

void ScriptedServer::Impl::Generate(const net::HttpRequest& request, Writer writer, bool chat) {
  const int64_t n = num_requests_++;
  Json body = Json::parse(request.body, nullptr, false);
  if (!body.is_object()) return writer->SendError(400, "body is not a JSON object");
  auto stream = std::make_shared<Stream>();
  stream->chat = chat;
  stream->start = Clock::now();
  stream->fault = script_.faults.empty() ? Fault::kNone : script_.faults[static_cast<size_t>(n) % script_.faults.size()];
  stream->include_usage = body.contains("stream_options") && body["stream_options"].value("include_usage", false);
  stream->num_tokens = script_.num_tokens > 0 ? script_.num_tokens : body.value("max_tokens", int64_t{16});
  std::string prompt_text = body.contains("prompt") && body["prompt"].is_string() ? body["prompt"].get<std::string>() : "";
  for (const Json& message : body.value("messages", Json::array())) prompt_text += " " + message.value("content", "");
  stream->prompt_tokens = static_cast<int64_t>(static_cast<double>(CountWords(prompt_text)) * script_.tokens_per_word);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bodies_.size() < kMaxBodies) bodies_.push_back(request.body);
  }
  if (stream->fault == Fault::kHttp500) return writer->SendError(500, "scripted failure");
  writer->StartStream(200, net::SseHeaders());
  stream->writer = std::move(writer);
  if (stream->fault == Fault::kStall) {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_.push_back(std::move(stream->writer));
    return;
  }
  if (chat) stream->writer->Write(stream->Chunk("", true));
  if (script_.ttft_ms == 0 && script_.itl_ms == 0) {
    for (int64_t token = 0; stream->writer && token < stream->num_tokens; ++token) Step(stream, token);
    return;
  }
  timer_->At(stream->start + std::chrono::milliseconds(script_.ttft_ms), [this, stream] { Step(stream, 0); });
}

// Writes token `token`, then schedules the next one or ends the stream (or misbehaves).
void ScriptedServer::Impl::Step(std::shared_ptr<Stream> stream, int64_t token) {
  const bool last = token + 1 >= stream->num_tokens;
  if (stream->fault == Fault::kMalformedSse && token == 1) {
    stream->writer->Write("data: {\"choices\": [ not json\n\n");
    stream->writer->End();
    stream->writer.reset();
    return;
  }
  if (stream->fault == Fault::kCloseMidStream && token == stream->num_tokens / 2) {
    stream->writer.reset();  // dropped mid-stream: the server cuts the connection
    return;
  }
  std::string bytes = stream->Chunk(" w" + std::to_string(token), false);
  if (last) bytes += stream->Ending();
  stream->writer->Write(bytes);
  if (last) {
    stream->writer->End();
    stream->writer.reset();
    return;
  }
  if (script_.ttft_ms == 0 && script_.itl_ms == 0) return;  // the caller's loop writes the next one
  auto when = stream->start + std::chrono::milliseconds(script_.ttft_ms + (token + 1) * script_.itl_ms);
  timer_->At(when, [this, stream, token] { Step(stream, token + 1); });
}

ScriptedServer::ScriptedServer(StreamScript script) : impl_(std::make_unique<Impl>(std::move(script))) {}
ScriptedServer::~ScriptedServer() { Stop(); }
Status ScriptedServer::Start(uint16_t port) { return impl_->Start(port); }
uint16_t ScriptedServer::port() const { return impl_->port(); }
std::string ScriptedServer::url() const { return "http://127.0.0.1:" + std::to_string(port()); }
void ScriptedServer::Stop() { impl_->Stop(); }
int64_t ScriptedServer::num_generation_requests() const { return impl_->num_generation_requests(); }
std::vector<std::string> ScriptedServer::bodies() const { return impl_->bodies(); }

}  // namespace surge::bench::testing
