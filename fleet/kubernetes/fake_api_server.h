// The scripted Kubernetes API server (tests/node/fake_kube_apiserver.mjs) as a child process,
// and the fixture the Kubernetes client tests share (kubernetes_test.cc, kubernetes_refusal_test.cc).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet/kubernetes/deployment_scaler.h"
#include "fleet/kubernetes/endpoint_slice_watcher.h"
#include "fleet/kubernetes/kube_client.h"
#include "base/check.h"

extern char** environ;

namespace surge::k8s::testing_util {

using nlohmann::json;
namespace fs = std::filesystem;
constexpr char kNs[] = "serving";
constexpr char kSelector[] = "app.kubernetes.io/name=surge-engine";

inline std::string Base64(const std::string& in) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<uint8_t>(in[i + 2]);
    out += kChars[(n >> 18) & 63];
    out += kChars[(n >> 12) & 63];
    out += i + 1 < in.size() ? kChars[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kChars[n & 63] : '=';
  }
  return out;
}

inline std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The fake as a child process: its stdin is kept open (closing it stops the fake).
class FakeApiServer {
 public:
  FakeApiServer() {
    char pattern[] = "/tmp/k8s_test.XXXXXX";
    dir_ = mkdtemp(pattern);
    int in[2], out[2];
    CHECK_EQ(pipe(in), 0);
    CHECK_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string tls_dir = dir_.string();
    std::vector<const char*> argv = {NODE_EXECUTABLE, FAKE_APISERVER, "--tls-dir", tls_dir.c_str(),
                                     "--token", "s3cret", nullptr};
    CHECK_EQ(posix_spawn(&pid_, NODE_EXECUTABLE, &actions, nullptr, const_cast<char**>(argv.data()), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    stdin_fd_ = in[1];
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    port_ = json::parse(line, nullptr, false).value("port", 0);
  }
  ~FakeApiServer() {
    close(stdin_fd_);
    int status = 0;
    waitpid(pid_, &status, 0);
    fs::remove_all(dir_);
  }
  bool ok() const { return port_ != 0; }
  std::string server() const { return "https://127.0.0.1:" + std::to_string(port_); }
  std::string ca_pem() const { return ReadText(dir_ / "ca.crt"); }
  const fs::path& dir() const { return dir_; }

  KubeClientConfig Config(std::string token = "s3cret") const {
    return KubeClientConfig{.server = server(), .token = std::move(token), .tls = {.ca_pem = ca_pem()}};
  }
  json Control(const std::string& op, const json& args = json::object()) const {
    StatusOr<net::HttpResponse> response = KubeClient(Config()).Call("POST", "/_fake/" + op, args.dump(), "application/json");
    CHECK(response.ok() && response->status == 200);
    return json::parse(response->body);
  }
  void Slice(const std::string& type, const std::string& name, const std::vector<json>& endpoints, bool silent = false,
             const std::string& app = "surge-engine") const {
    json slice = {{"metadata", {{"name", name}, {"namespace", kNs}, {"labels", {{"app.kubernetes.io/name", app}}}}},
                  {"addressType", "IPv4"},
                  {"ports", json::array({{{"name", "metrics"}, {"port", 9000}}, {{"name", "http"}, {"port", 8000}}})},
                  {"endpoints", json(endpoints)}};
    Control("slice", {{"type", type}, {"object", slice}, {"silent", silent}});
  }

 private:
  fs::path dir_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int port_ = 0;
};

inline json Endpoint(const std::string& ip, bool ready = true, bool terminating = false) {
  return {{"addresses", json::array({ip})}, {"conditions", {{"ready", ready}, {"serving", ready}, {"terminating", terminating}}}};
}

template <typename Predicate>
bool WaitFor(Predicate predicate, int timeout_ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

using Urls = std::vector<std::string>;

class KubernetesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.ok()) << "the fake API server did not start"; }
  EndpointSliceWatcherOptions Options() const {
    return {.kube_namespace = kNs, .label_selector = kSelector, .initial_backoff_ms = 20, .max_backoff_ms = 200};
  }
  FakeApiServer fake_;
};

}  // namespace surge::k8s::testing_util
