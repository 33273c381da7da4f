// Hostile or broken answers from the Kubernetes API and hostile kubeconfigs (issue 31): each is
// a clear error or a refused-and-counted object, never an exception, undefined behaviour or a
// silently wrong value, and the client goes on working.
#include "fleet/kubernetes/fake_api_server.h"

namespace surge::k8s {
namespace {

using namespace testing_util;  // NOLINT: the shared fixture and helpers

constexpr char kScalePath[] = "/apis/apps/v1/namespaces/serving/deployments/engine/scale";
constexpr char kSlicesPath[] = "/apis/discovery.k8s.io/v1/namespaces/serving/endpointslices";

std::string Deep(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string SliceJson(const std::string& name, const std::string& port, const std::string& ip) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"serving","resourceVersion":"7"},"addressType":"IPv4",)"
         R"("ports":[{"name":"http","port":)" + port + R"(}],"endpoints":[{"addresses":[")" + ip + R"("]}]})";
}

TEST_F(KubernetesTest, HostileScaleAnswersAreErrorsAndTheScalerGoesOn) {
  fake_.Control("deployment", {{"namespace", kNs}, {"name", "engine"}, {"replicas", 2}});
  DeploymentScaler scaler(KubeClient(fake_.Config()), kNs, "engine");
  const std::pair<int, std::string> answers[] = {
      {200, R"({"kind":"Scale","spec":{"replicas":1e300}})"},
      {200, R"({"kind":"Scale","spec":{"replicas":4294967298}})"},
      {200, R"({"kind":"Scale","spec":{"replicas":"3"}})"},
      {200, R"({"kind":"Scale","status":{"selector":7}})"},
      {200, R"({"kind":"Scale","metadata":)" + Deep(100'000) + "}"},
      {200, R"({"kind":1})"},
      {500, R"({"kind":"Status","message":42})"},
      {500, R"({"kind":"Status","message":{"a":[1,2]}})"},
      {503, R"({"message":)" + Deep(100'000) + "}"},
  };
  for (const auto& [status, body] : answers) {
    fake_.Control("raw", {{"method", "GET"}, {"path", kScalePath}, {"status", status}, {"body", body}});
    StatusOr<DeploymentScale> scale = scaler.Get();
    ASSERT_FALSE(scale.ok()) << body.substr(0, 80);
    EXPECT_EQ(scale.status().code(), status == 200 ? StatusCode::kDataLoss : StatusCode::kUnavailable)
        << scale.status().ToString().substr(0, 300);
  }
  fake_.Control("raw", {{"method", "GET"}, {"path", kScalePath}, {"status", 200},
                        {"body", R"({"kind":"Scale","spec":{"replicas":1e300}})"}});
  EXPECT_NE(scaler.Get().status().message().find("replicas"), std::string::npos);
  // A Status whose message is not a string: the body's start is the message.
  fake_.Control("raw", {{"method", "GET"}, {"path", kScalePath}, {"status", 403}, {"body", R"({"message":[1]})"}});
  EXPECT_NE(scaler.Get().status().message().find(R"({"message":[1]})"), std::string::npos);
  // Not UTF-8 at all.
  fake_.Control("raw", {{"method", "GET"}, {"path", kScalePath}, {"status", 500}, {"bodyBase64", Base64("\xff\xfe{")}});
  EXPECT_EQ(scaler.Get().status().code(), StatusCode::kUnavailable);
  StatusOr<DeploymentScale> scale = scaler.SetReplicas(3);  // and then it scales as ever
  ASSERT_TRUE(scale.ok()) << scale.status().ToString();
  EXPECT_EQ(scale->spec_replicas, 3);
}

TEST_F(KubernetesTest, AListedSliceThatCannotBeReadIsRefusedAndTheRestCount) {
  // 4294967376 = 2^32 + 80: it used to become port 80.
  const std::string list = R"({"kind":"EndpointSliceList","metadata":{"resourceVersion":"9"},"items":[)" +
                           SliceJson("bad-port", "4294967376", "10.0.0.1") + "," +
                           SliceJson("string-port", "\"8000\"", "10.0.0.2") + "," +
                           SliceJson("good", "8000", "10.0.0.3") + "]}";
  fake_.Control("raw", {{"method", "GET"}, {"path", kSlicesPath}, {"status", 200}, {"body", list}});
  EndpointSliceWatcherOptions options = Options();
  std::atomic<int> num_reported{0};
  options.on_refused = [&](const Status& why) {
    ++num_reported;
    EXPECT_NE(why.message().find("port"), std::string::npos) << why.ToString();
  };
  EndpointSliceWatcher watcher(KubeClient(fake_.Config()), options, nullptr);
  ASSERT_TRUE(watcher.Start().ok());
  EXPECT_EQ(watcher.Endpoints(), Urls{"http://10.0.0.3:8000"});
  EXPECT_EQ(watcher.num_refused(), 2);
  EXPECT_EQ(num_reported, 2);
}

TEST_F(KubernetesTest, AnUnreadableListFailsStartWithAClearError) {
  for (const std::string& body : {R"({"items":)" + Deep(100'000) + "}", std::string(R"({"items":{}})"),
                                  std::string("not json")}) {
    fake_.Control("raw", {{"method", "GET"}, {"path", kSlicesPath}, {"status", 200}, {"body", body}});
    Status status = EndpointSliceWatcher(KubeClient(fake_.Config()), Options(), nullptr).Start();
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status.ToString().substr(0, 300);
  }
  fake_.Control("raw", {{"method", "GET"}, {"path", kSlicesPath}, {"status", 500}, {"body", R"({"message":false})"}});
  Status status = EndpointSliceWatcher(KubeClient(fake_.Config()), Options(), nullptr).Start();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(R"({"message":false})"), std::string::npos) << status.ToString();
}

TEST_F(KubernetesTest, BadWatchEventsAreSkippedAndTheWatchGoesOn) {
  fake_.Slice("ADDED", "engine-a", {Endpoint("10.0.0.1")});
  EndpointSliceWatcher watcher(KubeClient(fake_.Config()), Options(), nullptr);
  ASSERT_TRUE(watcher.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return fake_.Control("state")["numWatches"] == 1; }));
  for (const std::string& line : {
           std::string("not json"),
           R"({"type":"ADDED","object":)" + Deep(100'000) + "}",
           R"({"type":"MODIFIED","object":)" + SliceJson("engine-a", "4294967376", "10.0.0.9") + "}",
           std::string(R"({"type":7,"object":{}})"),
           std::string(R"({"type":"ADDED","object":[]})"),
           std::string(R"({"type":"RENAMED","object":{}})"),
       }) {
    fake_.Control("watch-line", {{"line", line}});
  }
  fake_.Slice("ADDED", "engine-b", {Endpoint("10.0.1.1")});  // a good event after the bad ones
  ASSERT_TRUE(WaitFor([&] { return watcher.Endpoints().size() == 2; })) << watcher.num_refused();
  EXPECT_EQ(watcher.Endpoints(), (Urls{"http://10.0.0.1:8000", "http://10.0.1.1:8000"}));  // engine-a kept
  EXPECT_EQ(watcher.num_refused(), 6);
  EXPECT_EQ(watcher.num_watches(), 1);  // never reconnected: nothing ended the watch
}

TEST(KubeConfigRefusalTest, HostileKubeconfigsAreErrorsNamingTheField) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"current-context":)" + Deep(100'000) + "}", "deeper"},
      {R"({"current-context":7})", "current-context"},
      {R"({"current-context":"c","contexts":[{"name":"c","context":{"cluster":["x"]}}]})", "cluster"},
      {R"({"current-context":"c","contexts":[{"name":"c","context":{"cluster":"k"}}],)"
       R"("clusters":[{"name":"k","cluster":{"server":1}}]})", "server"},
      {R"({"current-context":"c","contexts":[{"name":"c","context":{"cluster":"k"}}],)"
       R"("clusters":[{"name":"k","cluster":{"server":"https://h","insecure-skip-tls-verify":"yes"}}]})",
       "insecure-skip-tls-verify"},
      {R"({"current-context":"c","contexts":[{"name":"c","context":{"cluster":"k","user":"u"}}],)"
       R"("clusters":[{"name":"k","cluster":{"server":"https://h"}}],"users":[{"name":"u","user":{"token":5}}]})",
       "token"},
      {R"({"current-context":"c","contexts":[{"name":"c","context":{"cluster":"k"}}],)"
       R"("clusters":[{"name":"k","cluster":{"server":"https://h","certificate-authority-data":{}}}]})",
       "certificate-authority-data"},
      {"current-context: " + std::string(5'000, '[') + std::string(5'000, ']') + "\n", "deep"},
  };
  for (const auto& [text, named] : cases) {
    StatusOr<KubeClientConfig> config = ParseKubeconfig(text, "/nonexistent");
    ASSERT_FALSE(config.ok()) << text.substr(0, 200);
    EXPECT_NE(config.status().message().find(named), std::string::npos) << config.status().ToString().substr(0, 300);
  }
}

}  // namespace
}  // namespace surge::k8s
