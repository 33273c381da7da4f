// ReadBoundedFile: a whole file into a string, refusing files over a size limit before reading.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace surge::autoscale {

// NotFound "PATH: cannot open WHAT"; DataLoss "PATH: WHAT larger than N bytes".
StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes, const std::string& what);

}  // namespace surge::autoscale
