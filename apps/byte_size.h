// Byte sizes on the command line: "2GiB", "512MiB", "1.5GB", "65536", and fractions of the
// memory still available ("0.2"), as --kv-cache-memory and --max-body-size take them.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace surge {

struct ByteSize {
  int64_t bytes = 0;      // when !is_fraction
  double fraction = 0;    // (0, 1]: of the available memory, when is_fraction
  bool is_fraction = false;
};

// Suffixes: K/M/G/T and KiB/MiB/GiB/TiB are powers of 1024, KB/MB/GB/TB powers of 1000,
// B or none: bytes. A bare number with a decimal point in (0, 1] is a fraction, unless
// `allow_fraction` is false. Errors name `flag`.
StatusOr<ByteSize> ParseByteSize(const std::string& text, const std::string& flag, bool allow_fraction);

// MemAvailable from /proc/meminfo; 0 when unknown.
int64_t AvailableMemoryBytes();

}  // namespace surge
