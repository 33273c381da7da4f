#include "batch/ids.h"

#include <chrono>

#include "base/crypto.h"

namespace surge::batch {

std::string NewId(std::string_view prefix) {
  return RandomId(prefix, 24, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
}

int64_t UnixNowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace surge::batch
