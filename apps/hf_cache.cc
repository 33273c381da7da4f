#include "apps/hf_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace surge {
namespace {

namespace fs = std::filesystem;

bool IsModelId(const std::string& model) {
  const size_t slash = model.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < model.size() &&
         model.find('/', slash + 1) == std::string::npos && model[0] != '.' && model.find("..") == std::string::npos;
}

// refs/main's commit, or the one snapshot there is; "" when neither.
std::string SnapshotOf(const fs::path& repo) {
  std::error_code error;
  std::ifstream ref(repo / "refs" / "main");
  std::string commit;
  if (ref && std::getline(ref, commit) && !commit.empty() && fs::is_directory(repo / "snapshots" / commit, error)) {
    return (repo / "snapshots" / commit).string();
  }
  std::vector<fs::path> snapshots;
  for (fs::directory_iterator it(repo / "snapshots", error), end; !error && it != end; it.increment(error)) {
    if (it->is_directory(error)) snapshots.push_back(it->path());
  }
  return snapshots.size() == 1 ? snapshots[0].string() : "";
}

}  // namespace

std::vector<std::string> HfCacheDirectories() {
  std::vector<std::string> dirs;
  if (const char* hub = std::getenv("HF_HUB_CACHE"); hub != nullptr && *hub != '\0') dirs.push_back(hub);
  if (const char* home = std::getenv("HF_HOME"); home != nullptr && *home != '\0') {
    dirs.push_back((fs::path(home) / "hub").string());
  }
  if (const char* user = std::getenv("HOME"); user != nullptr && *user != '\0') {
    dirs.push_back((fs::path(user) / ".cache" / "huggingface" / "hub").string());
  }
  return dirs;
}

StatusOr<std::string> ResolveModelPath(const std::string& model, const std::vector<std::string>& cache_dirs) {
  std::error_code error;
  if (model.empty() || fs::exists(model, error) || !IsModelId(model)) return model;
  const std::string repo_name = "models--" + model.substr(0, model.find('/')) + "--" + model.substr(model.find('/') + 1);
  std::string looked;
  for (const std::string& dir : cache_dirs) {
    const fs::path repo = fs::path(dir) / repo_name;
    looked += (looked.empty() ? "" : ", ") + repo.string();
    if (!fs::is_directory(repo, error)) continue;
    if (std::string snapshot = SnapshotOf(repo); !snapshot.empty()) return snapshot;
  }
  return NotFoundError("model '" + model + "' is neither a local path nor in the Hugging Face cache (looked in " +
                       (looked.empty() ? std::string("no cache directory: HF_HOME and HOME are unset") : looked) +
                       "); surge never downloads");
}

StatusOr<std::string> ResolveModelPath(const std::string& model) { return ResolveModelPath(model, HfCacheDirectories()); }

}  // namespace surge
