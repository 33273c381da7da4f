// SHA-256, a constant-time comparison and random bytes, all from OpenSSL's libcrypto: how API
// keys are stored and matched (without the lookup's timing depending on the presented key),
// cache keys, and ids that nobody can predict.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace surge {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
// The digest's first `num_bytes` (at most 32) in lowercase hex: cache keys and tags.
std::string Sha256Hex(std::string_view data, size_t num_bytes = 32);

// True when `a` and `b` hold the same bytes (CRYPTO_memcmp). The time depends on the lengths
// only: every byte is read, nothing exits at the first difference.
bool ConstantTimeEquals(std::span<const uint8_t> a, std::span<const uint8_t> b);
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// `prefix` + `num_chars` characters drawn uniformly from `alphabet` (at most 256 characters)
// with OpenSSL's CSPRNG (RAND_bytes). Aborts if the CSPRNG fails (it never does once seeded).
std::string RandomId(std::string_view prefix, int num_chars, std::string_view alphabet);

}  // namespace surge
