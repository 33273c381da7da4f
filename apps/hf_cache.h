// Model ids (ORG/NAME, as `vllm serve` takes them) found in the local Hugging Face cache,
// offline: surge never downloads.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace surge {

// The cache directories to look in, first match wins: $HF_HUB_CACHE, $HF_HOME/hub,
// ~/.cache/huggingface/hub.
std::vector<std::string> HfCacheDirectories();

// `model` when it names an existing file or directory; else, for ORG/NAME, the snapshot
// refs/main names under DIR/models--ORG--NAME/snapshots/ (the only snapshot when there is
// no refs/main) in the first cache directory that has one. NOT_FOUND says where it looked.
StatusOr<std::string> ResolveModelPath(const std::string& model, const std::vector<std::string>& cache_dirs);
StatusOr<std::string> ResolveModelPath(const std::string& model);

}  // namespace surge
