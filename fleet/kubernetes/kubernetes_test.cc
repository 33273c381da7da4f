// The Kubernetes clients against the scripted API server (tests/node/fake_kube_apiserver.mjs,
// checked against @kubernetes/client-node), run as a node process serving https with a CA
// it makes: configuration (kubeconfig, in-cluster), discovery following slices coming and
// going, re-list on 410, reconnects, and scale calls with their shape and 409 retries.
#include "fleet/kubernetes/fake_api_server.h"

namespace surge::k8s {
namespace {

using namespace testing_util;  // NOLINT: the shared fixture and helpers

TEST(KubeConfigTest, Base64) {
  EXPECT_EQ(*Base64Decode("aGVsbG8="), "hello");
  EXPECT_EQ(*Base64Decode("aGVs\nbG8h"), "hello!");
  EXPECT_FALSE(Base64Decode("aGVsbG8").ok());
  EXPECT_FALSE(Base64Decode("a*==").ok());
}

TEST(EndpointUrlsTest, ReadyAddressesAtTheNamedPort) {
  const char* slice = R"({"addressType": "IPv6", "ports": [{"name": "http", "port": 8000}],
    "endpoints": [{"addresses": ["fd00::7"]}, {"addresses": ["fd00::8"], "conditions": {"ready": false}},
                  {"addresses": ["fd00::9"], "conditions": {"ready": true, "terminating": true}}]})";
  EXPECT_EQ(*ReadyEndpointUrls(slice, "http", "http"), Urls{"http://[fd00::7]:8000"});  // absent ready: ready
  EXPECT_TRUE(ReadyEndpointUrls(slice, "grpc", "http")->empty());
  EXPECT_TRUE(ReadyEndpointUrls(R"({"endpoints": null})", "http", "http")->empty());
  EXPECT_EQ(ReadyEndpointUrls(R"({"ports": [{"name": 7}], "endpoints": []})", "http", "http").status().code(),
            StatusCode::kDataLoss);
  EXPECT_FALSE(ReadyEndpointUrls("[1]", "http", "http").ok());
}

TEST_F(KubernetesTest, KubeconfigAndInClusterConfig) {
  fs::path dir = fake_.dir();
  std::ofstream(dir / "ca-copy.crt") << fake_.ca_pem();
  json kubeconfig = {
      {"apiVersion", "v1"}, {"kind", "Config"}, {"current-context", "fake"},
      {"clusters", {{{"name", "c1"}, {"cluster", {{"server", fake_.server() + "/"}, {"certificate-authority", "ca-copy.crt"}}}},
                    {{"name", "c2"}, {"cluster", {{"server", fake_.server()}, {"certificate-authority-data", Base64(fake_.ca_pem())}}}}}},
      {"users", {{{"name", "router"}, {"user", {{"token", "s3cret"}}}}, {{"name", "sso"}, {"user", {{"exec", json::object()}}}}}},
      {"contexts", {{{"name", "fake"}, {"context", {{"cluster", "c1"}, {"user", "router"}, {"namespace", kNs}}}},
                    {{"name", "data"}, {"context", {{"cluster", "c2"}, {"user", "router"}}}},
                    {{"name", "exec"}, {"context", {{"cluster", "c2"}, {"user", "sso"}}}}}}};
  std::ofstream(dir / "kubeconfig.json") << kubeconfig.dump();
  for (const char* context : {"", "data"}) {
    StatusOr<KubeClientConfig> config = LoadKubeconfig((dir / "kubeconfig.json").string(), context);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    EXPECT_EQ(config->server, fake_.server());
    fake_.Control("deployment", {{"namespace", kNs}, {"name", "engine"}, {"replicas", 1}});
    StatusOr<DeploymentScale> scale = DeploymentScaler(KubeClient(*config), kNs, "engine").Get();
    ASSERT_TRUE(scale.ok()) << context << ": " << scale.status().ToString();
  }
  EXPECT_EQ(LoadKubeconfig((dir / "kubeconfig.json").string())->default_namespace, kNs);
  EXPECT_EQ(LoadKubeconfig((dir / "kubeconfig.json").string(), "exec").status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(LoadKubeconfig((dir / "kubeconfig.json").string(), "nope").status().code(), StatusCode::kNotFound);
  // The same config as kubectl writes it: YAML (no extension, as ~/.kube/config).
  std::ofstream(dir / "config") << "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n"
                                   "- name: c1\n  cluster:\n    server: " << fake_.server() << "/\n"
                                   "    certificate-authority: ca-copy.crt\n"
                                   "users:\n- name: router\n  user:\n    token: s3cret\n"
                                   "contexts:\n- name: fake\n  context:\n    cluster: c1\n    user: router\n"
                                   "    namespace: " << kNs << "\n";
  StatusOr<KubeClientConfig> from_yaml = LoadKubeconfig((dir / "config").string());
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.status().ToString();
  EXPECT_EQ(from_yaml->server, fake_.server());
  EXPECT_EQ(from_yaml->default_namespace, kNs);
  ASSERT_TRUE(DeploymentScaler(KubeClient(*from_yaml), kNs, "engine").Get().ok());
  std::ofstream(dir / "bad-config") << "clusters: [\n";
  StatusOr<KubeClientConfig> bad = LoadKubeconfig((dir / "bad-config").string());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("line "), std::string::npos) << bad.status().message();

  // In cluster: the service-account files and the two environment variables.
  fs::create_directories(dir / "sa");
  std::ofstream(dir / "sa" / "token") << "s3cret\n";
  std::ofstream(dir / "sa" / "ca.crt") << fake_.ca_pem();
  std::ofstream(dir / "sa" / "namespace") << kNs;
  std::string port = fake_.server().substr(fake_.server().rfind(':') + 1);
  auto env = [&](const char* name) -> const char* {
    if (std::string(name) == "KUBERNETES_SERVICE_HOST") return "127.0.0.1";
    if (std::string(name) == "KUBERNETES_SERVICE_PORT") return port.c_str();
    return nullptr;
  };
  StatusOr<KubeClientConfig> in_cluster = InClusterConfig((dir / "sa").string(), env);
  ASSERT_TRUE(in_cluster.ok()) << in_cluster.status().ToString();
  EXPECT_EQ(in_cluster->default_namespace, kNs);
  EXPECT_TRUE(DeploymentScaler(KubeClient(*in_cluster), kNs, "engine").Get().ok());
  EXPECT_EQ(InClusterConfig((dir / "sa").string(), [](const char*) { return nullptr; }).status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(InClusterConfig((dir / "missing").string(), env).status().code(), StatusCode::kNotFound);
}

TEST_F(KubernetesTest, DiscoveryFollowsEndpointsComingAndGoing) {
  fake_.Slice("ADDED", "engine-a", {Endpoint("10.0.0.1"), Endpoint("10.0.0.2", false)});
  fake_.Slice("ADDED", "other", {Endpoint("10.9.9.9")}, false, "something-else");
  std::mutex mu;
  std::vector<std::pair<Urls, Urls>> changes;
  EndpointSliceWatcher watcher(KubeClient(fake_.Config()), Options(), [&](const Urls& added, const Urls& removed) {
    std::lock_guard<std::mutex> lock(mu);
    changes.emplace_back(added, removed);
  });
  ASSERT_TRUE(watcher.Start().ok());
  EXPECT_EQ(watcher.Endpoints(), Urls{"http://10.0.0.1:8000"});  // not ready, other app: excluded
  auto num_changes = [&] { std::lock_guard<std::mutex> lock(mu); return changes.size(); };
  ASSERT_EQ(num_changes(), 1u);

  fake_.Slice("MODIFIED", "engine-a", {Endpoint("10.0.0.1"), Endpoint("10.0.0.2")});   // became ready
  ASSERT_TRUE(WaitFor([&] { return num_changes() == 2; }));
  fake_.Slice("ADDED", "engine-b", {Endpoint("10.0.1.1")});
  ASSERT_TRUE(WaitFor([&] { return num_changes() == 3; }));
  fake_.Slice("MODIFIED", "engine-a", {Endpoint("10.0.0.1", true, true), Endpoint("10.0.0.2")});  // terminating
  ASSERT_TRUE(WaitFor([&] { return num_changes() == 4; }));
  fake_.Slice("DELETED", "engine-b", {});
  ASSERT_TRUE(WaitFor([&] { return num_changes() == 5; }));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(changes[1], std::make_pair(Urls{"http://10.0.0.2:8000"}, Urls{}));
  EXPECT_EQ(changes[2], std::make_pair(Urls{"http://10.0.1.1:8000"}, Urls{}));
  EXPECT_EQ(changes[3], std::make_pair(Urls{}, Urls{"http://10.0.0.1:8000"}));
  EXPECT_EQ(changes[4], std::make_pair(Urls{}, Urls{"http://10.0.1.1:8000"}));
  EXPECT_EQ(watcher.Endpoints(), Urls{"http://10.0.0.2:8000"});
  EXPECT_EQ(watcher.num_lists(), 1);
  // The watch asked for what the brief of a watch is: from the list's version, with bookmarks.
  json requests = fake_.Control("state")["requests"];
  json watch = requests[1]["query"];
  EXPECT_EQ(watch["watch"], "1");
  EXPECT_EQ(watch["allowWatchBookmarks"], "true");
  EXPECT_EQ(watch["labelSelector"], kSelector);
  EXPECT_EQ(watch["resourceVersion"], requests[0]["query"].value("resourceVersion", watch["resourceVersion"].get<std::string>()));
}

TEST_F(KubernetesTest, BookmarkMovesTheResourceVersion) {
  fake_.Slice("ADDED", "engine-a", {Endpoint("10.0.0.1")});
  EndpointSliceWatcher watcher(KubeClient(fake_.Config()), Options(), nullptr);
  ASSERT_TRUE(watcher.Start().ok());
  std::string listed = watcher.resource_version();
  ASSERT_TRUE(WaitFor([&] { return fake_.Control("state")["numWatches"] == 1; }));
  fake_.Slice("ADDED", "unrelated", {Endpoint("10.5.0.1")}, false, "x");  // moves rv, not ours
  fake_.Control("bookmark");
  std::string now = std::to_string(fake_.Control("state")["rv"].get<int>());
  ASSERT_TRUE(WaitFor([&] { return watcher.resource_version() == now; })) << listed << " " << now;
}

TEST_F(KubernetesTest, GoneAfterCompactionRelists) {
  for (bool as_http : {false, true}) {
    SCOPED_TRACE(as_http ? "410 as HTTP status" : "410 as ERROR event");
    fake_.Control("watch410-as-http", {{"on", as_http}});
    fake_.Slice("ADDED", "engine-a", {Endpoint("10.0.0.1")});
    fake_.Slice("ADDED", "engine-b", {Endpoint("10.0.1.1")});
    EndpointSliceWatcher watcher(KubeClient(fake_.Config()), Options(), nullptr);
    ASSERT_TRUE(watcher.Start().ok());
    ASSERT_EQ(watcher.Endpoints().size(), 2u);
    ASSERT_TRUE(WaitFor([&] { return fake_.Control("state")["numWatches"] == 1; }));
    // A deletion the watch never sees, compaction past the watcher's version, the watch
    // dropped: reconnecting draws 410, and only the re-list learns engine-a is gone.
    fake_.Slice("DELETED", "engine-a", {}, /*silent=*/true);
    fake_.Control("compact");
    fake_.Control("close-watches");
    ASSERT_TRUE(WaitFor([&] { return watcher.Endpoints() == Urls{"http://10.0.1.1:8000"}; }));
    EXPECT_EQ(watcher.num_lists(), 2);
    // And it watches again from the re-list's version.
    fake_.Slice("ADDED", "engine-c", {Endpoint("10.0.2.1")});
    ASSERT_TRUE(WaitFor([&] { return watcher.Endpoints().size() == 2; }));
    watcher.Stop();
    fake_.Slice("DELETED", "engine-b", {});
    fake_.Slice("DELETED", "engine-c", {});
  }
}

TEST_F(KubernetesTest, ReconnectsWithoutRelistAndStopsPromptly) {
  fake_.Slice("ADDED", "engine-a", {Endpoint("10.0.0.1")});
  EndpointSliceWatcher watcher(KubeClient(fake_.Config()), Options(), nullptr);
  ASSERT_TRUE(watcher.Start().ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(WaitFor([&] { return fake_.Control("state")["numWatches"] == 1; }));
    fake_.Control("close-watches");
    fake_.Slice("ADDED", "engine-" + std::to_string(i + 10), {Endpoint("10.0.3." + std::to_string(i))});
  }
  ASSERT_TRUE(WaitFor([&] { return watcher.Endpoints().size() == 4; }));
  EXPECT_EQ(watcher.num_lists(), 1);  // events since its version were replayed: no re-list
  EXPECT_GE(watcher.num_watches(), 4);
  auto start = std::chrono::steady_clock::now();
  watcher.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(KubernetesTest, ASilentWatchIsReopenedAfterTheReadTimeout) {
  fake_.Slice("ADDED", "engine-a", {Endpoint("10.0.0.1")});
  EndpointSliceWatcherOptions options = Options();
  options.read_timeout_ms = 100;
  EndpointSliceWatcher watcher(KubeClient(fake_.Config()), options, nullptr);
  ASSERT_TRUE(watcher.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return watcher.num_watches() >= 3; }));
  fake_.Slice("ADDED", "engine-b", {Endpoint("10.0.1.1")});
  ASSERT_TRUE(WaitFor([&] { return watcher.Endpoints().size() == 2; }));
  EXPECT_EQ(watcher.num_lists(), 1);
}

TEST_F(KubernetesTest, StartFailsWithTheServersMessage) {
  EndpointSliceWatcher watcher(KubeClient(fake_.Config("wrong")), Options(), nullptr);
  Status status = watcher.Start();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("HTTP 401: Unauthorized"), std::string::npos) << status.ToString();
  KubeClientConfig untrusted = fake_.Config();
  untrusted.tls.ca_pem.clear();  // the system CAs do not know the fake's CA
  EXPECT_NE(EndpointSliceWatcher(KubeClient(untrusted), Options(), nullptr).Start().message().find("TLS handshake"),
            std::string::npos);
}

TEST_F(KubernetesTest, ScaleCallsHaveTheRightShapeAndRetryConflicts) {
  fake_.Control("deployment", {{"namespace", kNs}, {"name", "engine"}, {"replicas", 2}});
  DeploymentScaler scaler(KubeClient(fake_.Config()), kNs, "engine");
  StatusOr<DeploymentScale> scale = scaler.Get();
  ASSERT_TRUE(scale.ok()) << scale.status().ToString();
  EXPECT_EQ(scale->spec_replicas, 2);
  EXPECT_EQ(scale->selector, "app=engine");

  fake_.Control("conflicts", {{"n", 2}});  // two other writers get in first
  scale = scaler.SetReplicas(5);
  ASSERT_TRUE(scale.ok()) << scale.status().ToString();
  EXPECT_EQ(scale->spec_replicas, 5);
  EXPECT_EQ(scaler.num_conflicts(), 2);
  json state = fake_.Control("state");
  EXPECT_EQ(state["deployments"]["serving/engine"], 5);
  json puts = json::array();
  for (const json& request : state["requests"]) if (request["method"] == "PUT") puts.push_back(request);
  ASSERT_EQ(puts.size(), 3u);
  EXPECT_EQ(puts[2]["path"], "/apis/apps/v1/namespaces/serving/deployments/engine/scale");
  EXPECT_EQ(puts[2]["contentType"], "application/json");
  json body = json::parse(puts[2]["body"].get<std::string>());
  EXPECT_EQ(body["kind"], "Scale");
  EXPECT_EQ(body["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(body["spec"]["replicas"], 5);
  EXPECT_EQ(body["metadata"]["name"], "engine");
  EXPECT_FALSE(body["metadata"]["resourceVersion"].get<std::string>().empty());

  EXPECT_TRUE(scaler.SetReplicas(5).ok());  // already there: no write
  EXPECT_EQ(fake_.Control("state")["requests"].size(), state["requests"].size() + 1);
  fake_.Control("conflicts", {{"n", 100}});
  EXPECT_NE(scaler.SetReplicas(1).status().message().find("5 conflicts (409) in a row"), std::string::npos);
  fake_.Control("conflicts", {{"n", 0}});
  EXPECT_EQ(DeploymentScaler(KubeClient(fake_.Config()), kNs, "missing").SetReplicas(1).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(scaler.SetReplicas(-1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace surge::k8s
