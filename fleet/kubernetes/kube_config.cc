// Where KubeClient's configuration comes from: a pod's service account, or a kubeconfig (YAML or JSON).
#include <filesystem>

#include "fleet/kubernetes/kube_client.h"
#include "autoscale/read_file.h"
#include "base/json_access.h"
#include "base/yaml/yaml_to_json.h"

namespace surge::k8s {
namespace {

using json::Json;
constexpr size_t kMaxConfigBytes = 4 << 20;
// A kubeconfig nests five levels (contexts, entry, context, ...); extensions a few more.
constexpr int kMaxConfigDepth = 64;

StatusOr<std::string> ReadSmall(const std::string& path, const std::string& what) {
  return autoscale::ReadBoundedFile(path, kMaxConfigBytes, what);
}

// The named entry of a kubeconfig list ("clusters", "users", "contexts"): {name, KEY: {...}},
// borrowed from `config`. Entries of the wrong shape are skipped, as kubectl skips them.
StatusOr<const Json*> FindNamed(const Json& config, const char* list, const char* key, const std::string& name) {
  const auto entries = config.find(list);
  if (entries != config.end() && entries->is_array()) {
    for (const Json& entry : *entries) {
      if (!entry.is_object()) continue;
      const auto entry_name = entry.find("name");
      const auto value = entry.find(key);
      if (entry_name != entry.end() && *entry_name == name && value != entry.end() && value->is_object()) {
        return &*value;
      }
    }
  }
  return NotFoundError(std::string("kubeconfig: no ") + key + " named '" + name + "' in " + list);
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return (std::filesystem::path(base_dir) / path).string();
}

// "X-data" (base64) or "X" (a file path) of a kubeconfig entry; "" when neither is set.
StatusOr<std::string> DataOrFile(const Json& entry, const std::string& key, const std::string& base_dir,
                                 const std::string& what) {
  json::ObjectReader reader(entry, "kubeconfig: " + what);
  std::string data, path;
  if (!reader.String(key + "-data", &data).String(key, &path).ok()) return reader.status();
  if (reader.Find(key + "-data") != nullptr) {
    StatusOr<std::string> decoded = Base64Decode(data);
    if (!decoded.ok()) return decoded.status().WithContext("kubeconfig: " + key + "-data");
    return decoded;
  }
  if (reader.Find(key) != nullptr) return ReadSmall(Resolve(base_dir, path), key);
  return std::string();
}

Status ReadUser(const Json& user, const std::string& base_dir, KubeClientConfig* config) {
  if (user.contains("exec") || user.contains("auth-provider")) {
    return UnimplementedError("kubeconfig: exec and auth-provider users are not supported; use a token, "
                              "tokenFile or client certificate (e.g. a service-account token)");
  }
  json::ObjectReader reader(user, "kubeconfig: user");
  std::string token_file;
  if (!reader.String("token", &config->token).String("tokenFile", &token_file).ok()) return reader.status();
  if (!token_file.empty()) config->token_file = Resolve(base_dir, token_file);
  ASSIGN_OR_RETURN(config->tls.client_cert_pem, DataOrFile(user, "client-certificate", base_dir, "user"));
  ASSIGN_OR_RETURN(config->tls.client_key_pem, DataOrFile(user, "client-key", base_dir, "user"));
  return OkStatus();
}

}  // namespace

StatusOr<std::string> Base64Decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int num_bits = 0;
  size_t num_chars = 0;
  size_t num_padding = 0;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == ' ') continue;
    ++num_chars;
    if (c == '=') { ++num_padding; continue; }
    int v = value(c);
    if (v < 0 || num_padding > 0) return InvalidArgumentError("bad base64 character");
    bits = (bits << 6) | static_cast<uint32_t>(v);
    num_bits += 6;
    if (num_bits >= 8) {
      num_bits -= 8;
      out.push_back(static_cast<char>((bits >> num_bits) & 0xff));
    }
  }
  if (num_chars % 4 != 0 || num_padding > 2) return InvalidArgumentError("bad base64 length");
  return out;
}

StatusOr<KubeClientConfig> InClusterConfig(std::string_view service_account_dir,
                                           const std::function<const char*(const char*)>& getenv) {
  const char* host = getenv("KUBERNETES_SERVICE_HOST");
  const char* port = getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return UnavailableError("not in a cluster: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT are not set");
  }
  KubeClientConfig config;
  std::string host_text(host);
  if (host_text.find(':') != std::string::npos) host_text = "[" + host_text + "]";  // IPv6
  config.server = "https://" + host_text + ":" + port;
  const std::string dir(service_account_dir);
  config.token_file = dir + "/token";
  RETURN_IF_ERROR(ReadSmall(config.token_file, "service-account token").status());
  ASSIGN_OR_RETURN(config.tls.ca_pem, ReadSmall(dir + "/ca.crt", "service-account CA"));
  StatusOr<std::string> ns = ReadSmall(dir + "/namespace", "namespace");
  if (ns.ok()) config.default_namespace = *ns;
  return config;
}

namespace {

// kubectl writes YAML; `-o json` writes JSON, which is read as JSON (a JSON text with tabs is
// not always YAML). Either way the depth is bounded before anything recursive runs.
StatusOr<Json> KubeconfigTree(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    return json::Parse(text, "kubeconfig", kMaxConfigDepth, kMaxConfigBytes);
  }
  StatusOr<nlohmann::json> config = YamlToJson(text, {.max_bytes = kMaxConfigBytes, .max_depth = kMaxConfigDepth});
  if (!config.ok()) return config.status().WithContext("kubeconfig");
  return Json(*config);
}

StatusOr<KubeClientConfig> ParseKubeconfigTree(const Json& config, const std::string& base_dir,
                                               std::string_view context_name) {
  if (!config.is_object()) return InvalidArgumentError("kubeconfig: not a mapping of clusters, users and contexts");
  std::string context(context_name);
  json::ObjectReader top(config, "kubeconfig");
  if (context.empty() && !top.String("current-context", &context).ok()) return top.status();
  if (context.empty()) return InvalidArgumentError("kubeconfig: no current-context and no context named");
  ASSIGN_OR_RETURN(const Json* ctx, FindNamed(config, "contexts", "context", context));
  json::ObjectReader ctx_reader(*ctx, "kubeconfig: context '" + context + "'");
  std::string cluster_name, user_name;
  KubeClientConfig out;
  ctx_reader.String("cluster", &cluster_name).String("user", &user_name).String("namespace", &out.default_namespace);
  if (!ctx_reader.ok()) return ctx_reader.status();
  ASSIGN_OR_RETURN(const Json* cluster, FindNamed(config, "clusters", "cluster", cluster_name));
  json::ObjectReader cluster_reader(*cluster, "kubeconfig: cluster '" + cluster_name + "'");
  bool insecure = false;
  if (!cluster_reader.String("server", &out.server).Bool("insecure-skip-tls-verify", &insecure).ok()) {
    return cluster_reader.status();
  }
  if (out.server.empty()) return InvalidArgumentError("kubeconfig: cluster '" + cluster_name + "' has no server");
  while (!out.server.empty() && out.server.back() == '/') out.server.pop_back();
  ASSIGN_OR_RETURN(out.tls.ca_pem, DataOrFile(*cluster, "certificate-authority", base_dir, "cluster"));
  out.tls.verify_peer = !insecure;
  if (ctx_reader.Find("user") != nullptr) {
    ASSIGN_OR_RETURN(const Json* user, FindNamed(config, "users", "user", user_name));
    RETURN_IF_ERROR(ReadUser(*user, base_dir, &out));
  }
  return out;
}

}  // namespace

StatusOr<KubeClientConfig> ParseKubeconfig(std::string_view text, const std::string& base_dir,
                                           std::string_view context_name) {
  ASSIGN_OR_RETURN(Json config, KubeconfigTree(text));
  return ParseKubeconfigTree(config, base_dir, context_name);
}

StatusOr<KubeClientConfig> LoadKubeconfig(const std::string& path, std::string_view context_name) {
  ASSIGN_OR_RETURN(std::string text, ReadSmall(path, "kubeconfig"));
  StatusOr<KubeClientConfig> config =
      ParseKubeconfig(text, std::filesystem::path(path).parent_path().string(), context_name);
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

StatusOr<KubeClientConfig> DefaultConfig() {
  if (const char* list = std::getenv("KUBECONFIG"); list != nullptr && *list != '\0') {
    std::string first(list);
    return LoadKubeconfig(first.substr(0, first.find(':')));
  }
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    std::string path = std::string(home) + "/.kube/config";
    if (std::filesystem::exists(path)) return LoadKubeconfig(path);
  }
  return InClusterConfig();
}

}  // namespace surge::k8s
