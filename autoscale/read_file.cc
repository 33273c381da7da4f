#include "autoscale/read_file.h"

#include <fstream>

namespace surge::autoscale {

StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes, const std::string& what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return NotFoundError(path + ": cannot open " + what);
  std::streamoff size = in.tellg();
  if (size < 0 || static_cast<size_t>(size) > max_bytes) {
    return DataLossError(path + ": " + what + " larger than " + std::to_string(max_bytes) + " bytes");
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (in.gcount() != size) return DataLossError(path + ": " + what + " changed while being read");
  return text;
}

}  // namespace surge::autoscale
