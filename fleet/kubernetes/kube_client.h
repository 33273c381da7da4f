// KubeClient: authenticated calls to the Kubernetes API server (in-cluster service account or
// a kubeconfig; https with the cluster's CA, bearer token or client certificate).
#pragma once

#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/http_types.h"
#include "net/stream_fetch.h"

namespace surge::k8s {

inline constexpr std::string_view kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

struct KubeClientConfig {
  std::string server{};      // "https://10.96.0.1:443" (or "http://127.0.0.1:8001" via kubectl proxy)
  std::string token{};       // a bearer token, or ...
  std::string token_file{};  // ... a file re-read on every call (service-account tokens rotate)
  net::TlsOptions tls{};     // CA, client certificate
  std::string default_namespace{};  // the service account's or the context's; "" if none
};

// Inside a pod: KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT from `getenv`, and token,
// ca.crt and namespace under `service_account_dir`. Errors say what is missing.
StatusOr<KubeClientConfig> InClusterConfig(
    std::string_view service_account_dir = kServiceAccountDir,
    const std::function<const char*(const char*)>& getenv = [](const char* name) { return std::getenv(name); });

// A kubeconfig as kubectl writes it (YAML; JSON too, e.g. `kubectl config view --raw -o json`).
// The context `context_name`, or current-context: its cluster's server,
// certificate-authority(-data) and insecure-skip-tls-verify; its user's token, tokenFile,
// client-certificate(-data) and client-key(-data); its namespace. Relative file paths are read
// relative to the kubeconfig's directory. exec / auth-provider users are UNIMPLEMENTED.
StatusOr<KubeClientConfig> LoadKubeconfig(const std::string& path, std::string_view context_name = {});
StatusOr<KubeClientConfig> ParseKubeconfig(std::string_view text, const std::string& base_dir,
                                           std::string_view context_name = {});

// "$KUBECONFIG (its first path), else ~/.kube/config if present, else in-cluster": what
// `surge route --kubernetes` uses when no kubeconfig is named.
StatusOr<KubeClientConfig> DefaultConfig();

// RFC 4648 base64 (the *-data fields); INVALID_ARGUMENT on a bad character or length.
StatusOr<std::string> Base64Decode(std::string_view text);

class KubeClient {
 public:
  explicit KubeClient(KubeClientConfig config) : config_(std::move(config)) {}

  // One call: `path_and_query` is "/apis/apps/v1/namespaces/NS/deployments/D/scale". OK with
  // the response whatever its HTTP status (the caller reads the Status object of a 4xx).
  StatusOr<net::HttpResponse> Call(std::string_view method, std::string_view path_and_query,
                                   std::string body = {}, std::string_view content_type = {}) const;
  // A watch: no total timeout, body lines to `on_data` as they arrive, ended by `*cancel`
  // (CANCELLED) or when the server closes (OK). `read_timeout_ms` bounds silence.
  StatusOr<net::HttpResponse> Stream(std::string_view path_and_query, const net::StreamCallbacks& callbacks,
                                     const std::atomic<bool>* cancel, int64_t read_timeout_ms) const;

  const KubeClientConfig& config() const { return config_; }

 private:
  StatusOr<net::HttpHeaders> Headers() const;
  KubeClientConfig config_;
};

// "NAME" -> "NAME" with every character outside [A-Za-z0-9-_.~] percent-encoded: for a label
// selector in a query string ("app=surge,tier in (a,b)").
std::string QueryEscape(std::string_view text);

}  // namespace surge::k8s
