#include "server/server_context.h"

#include <algorithm>

#include "server/in_flight_request.h"


namespace surge {

void ServerContext::Reply(net::ResponseWriter& writer, std::string_view endpoint, int http_status,
                          std::string json) {
  metrics.CountRequest(endpoint, http_status);
  writer.SendJson(http_status, std::move(json));
}

void ServerContext::ReplyError(net::ResponseWriter& writer, std::string_view endpoint, const api::ApiError& error) {
  const api::ErrorReply reply = api::MakeErrorReply(error);
  metrics.CountRequest(endpoint, reply.http_status);
  net::HttpHeaders headers = {{"Content-Type", "application/json"}};
  if (reply.http_status == 429) headers.Set("Retry-After", std::to_string(RetryAfterSeconds()));
  writer.Send(reply.http_status, std::move(headers), reply.body);
}

std::string ServerContext::TokenBytes(int32_t id) const {
  const std::string& own = token_bytes[id];
  const Tokenizer& tokenizer = prompts.tokenizer();
  if (!own.empty() || !tokenizer.IsSpecial(id)) return own;
  return std::string(tokenizer.IdToToken(id).value_or(""));
}

int ServerContext::RetryAfterSeconds() const {
  const EngineStats stats = engine.Stats();
  const int64_t batch = std::max(stats.num_running, 1);
  return static_cast<int>(std::clamp<int64_t>((stats.num_waiting + batch - 1) / batch, 1, 60));
}

uint64_t ServerContext::Register(std::shared_ptr<InFlightRequest> request) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  in_flight_.emplace(id, std::move(request));
  metrics.SetInFlight(static_cast<int64_t>(in_flight_.size()));
  return id;
}

void ServerContext::Unregister(uint64_t id) {
  std::shared_ptr<InFlightRequest> last;  // released after the lock: its destructor may run here
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_flight_.find(id);
    if (it == in_flight_.end()) return;
    last = std::move(it->second);
    in_flight_.erase(it);
    metrics.SetInFlight(static_cast<int64_t>(in_flight_.size()));
  }
  idle_cv_.notify_all();
}

std::vector<std::shared_ptr<InFlightRequest>> ServerContext::InFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<InFlightRequest>> requests;
  for (const auto& [id, request] : in_flight_) requests.push_back(request);
  return requests;
}

bool ServerContext::WaitUntilIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, timeout, [&] { return in_flight_.empty(); });
}

}  // namespace surge
