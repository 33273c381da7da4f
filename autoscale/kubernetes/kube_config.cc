// Where KubeClient's configuration comes from: a pod's service account, or a kubeconfig (YAML or JSON).
#include <nlohmann/json.hpp>

#include <filesystem>

#include "autoscale/kubernetes/kube_client.h"
#include "autoscale/read_file.h"
#include "base/yaml/yaml_to_json.h"

namespace surge::autoscale::k8s {
namespace {

using nlohmann::json;
constexpr size_t kMaxConfigBytes = 4 << 20;

StatusOr<std::string> ReadSmall(const std::string& path, const std::string& what) {
  return ReadBoundedFile(path, kMaxConfigBytes, what);
}

// The named entry of a kubeconfig list ("clusters", "users", "contexts"): {name, KEY: {...}}.
StatusOr<json> FindNamed(const json& config, const char* list, const char* key, const std::string& name) {
  if (config.contains(list) && config[list].is_array()) {
    for (const json& entry : config[list]) {
      if (entry.is_object() && entry.value("name", "") == name && entry.contains(key) && entry[key].is_object()) {
        return entry[key];
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
StatusOr<std::string> DataOrFile(const json& entry, const std::string& key, const std::string& base_dir) {
  if (entry.contains(key + "-data")) {
    StatusOr<std::string> decoded = Base64Decode(entry.value(key + "-data", ""));
    if (!decoded.ok()) return decoded.status().WithContext("kubeconfig: " + key + "-data");
    return decoded;
  }
  if (entry.contains(key)) return ReadSmall(Resolve(base_dir, entry.value(key, "")), key);
  return std::string();
}

Status ReadUser(const json& user, const std::string& base_dir, KubeClientConfig* config) {
  if (user.contains("exec") || user.contains("auth-provider")) {
    return UnimplementedError("kubeconfig: exec and auth-provider users are not supported; use a token, "
                              "tokenFile or client certificate (e.g. a service-account token)");
  }
  config->token = user.value("token", "");
  if (user.contains("tokenFile")) config->token_file = Resolve(base_dir, user.value("tokenFile", ""));
  ASSIGN_OR_RETURN(config->tls.client_cert_pem, DataOrFile(user, "client-certificate", base_dir));
  ASSIGN_OR_RETURN(config->tls.client_key_pem, DataOrFile(user, "client-key", base_dir));
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
// not always YAML).
StatusOr<json> KubeconfigTree(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    json config = json::parse(text, nullptr, false);
    if (config.is_discarded()) return InvalidArgumentError("kubeconfig: not valid JSON");
    return config;
  }
  StatusOr<json> config = YamlToJson(text);
  if (!config.ok()) return config.status().WithContext("kubeconfig");
  return config;
}

StatusOr<KubeClientConfig> ParseKubeconfigTree(const json& config, const std::string& base_dir,
                                               std::string_view context_name) {
  if (!config.is_object()) return InvalidArgumentError("kubeconfig: not a mapping of clusters, users and contexts");
  std::string context = context_name.empty() ? config.value("current-context", "") : std::string(context_name);
  if (context.empty()) return InvalidArgumentError("kubeconfig: no current-context and no context named");
  ASSIGN_OR_RETURN(json ctx, FindNamed(config, "contexts", "context", context));
  ASSIGN_OR_RETURN(json cluster, FindNamed(config, "clusters", "cluster", ctx.value("cluster", "")));
  KubeClientConfig out;
  out.server = cluster.value("server", "");
  if (out.server.empty()) return InvalidArgumentError("kubeconfig: cluster '" + ctx.value("cluster", "") + "' has no server");
  while (!out.server.empty() && out.server.back() == '/') out.server.pop_back();
  ASSIGN_OR_RETURN(out.tls.ca_pem, DataOrFile(cluster, "certificate-authority", base_dir));
  out.tls.verify_peer = !cluster.value("insecure-skip-tls-verify", false);
  out.default_namespace = ctx.value("namespace", "");
  if (ctx.contains("user")) {
    ASSIGN_OR_RETURN(json user, FindNamed(config, "users", "user", ctx.value("user", "")));
    RETURN_IF_ERROR(ReadUser(user, base_dir, &out));
  }
  return out;
}

}  // namespace

StatusOr<KubeClientConfig> ParseKubeconfig(std::string_view text, const std::string& base_dir,
                                           std::string_view context_name) {
  ASSIGN_OR_RETURN(json config, KubeconfigTree(text));
  try {
    return ParseKubeconfigTree(config, base_dir, context_name);
  } catch (const json::exception& e) {  // a field of the wrong type
    return InvalidArgumentError(std::string("kubeconfig: ") + e.what());
  }
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

}  // namespace surge::autoscale::k8s
