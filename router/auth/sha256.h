// SHA-256 (FIPS 180-4) and a constant-time comparison: how API keys are stored and matched
// without the lookup's timing depending on the presented key's content.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace surge::router {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
// The digest's first `num_bytes` (at most 32) in lowercase hex: cache keys and tags.
std::string Sha256Hex(std::string_view data, size_t num_bytes = 32);

// True when `a` and `b` hold the same bytes. The time depends on the lengths only: every
// byte is read, nothing exits at the first difference.
bool ConstantTimeEquals(std::span<const uint8_t> a, std::span<const uint8_t> b);

}  // namespace surge::router
