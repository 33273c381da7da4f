#include "base/crypto.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>

#include "base/check.h"

namespace surge {

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest digest;
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return digest;
}

std::string Sha256Hex(std::string_view data, size_t num_bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const Sha256Digest digest = Sha256(data);
  std::string hex;
  for (size_t i = 0; i < std::min(num_bytes, digest.size()); ++i) {
    hex.push_back(kDigits[digest[i] >> 4]);
    hex.push_back(kDigits[digest[i] & 15]);
  }
  return hex;
}

bool ConstantTimeEquals(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;  // lengths are not secret (digests: always 32)
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return ConstantTimeEquals(std::span(reinterpret_cast<const uint8_t*>(a.data()), a.size()),
                            std::span(reinterpret_cast<const uint8_t*>(b.data()), b.size()));
}

std::string RandomId(std::string_view prefix, int num_chars, std::string_view alphabet) {
  CHECK(!alphabet.empty() && alphabet.size() <= 256) << "RandomId: alphabet of " << alphabet.size();
  // Bytes at or past the largest multiple of the alphabet's size are redrawn: no modulo bias.
  const size_t limit = 256 / alphabet.size() * alphabet.size();
  std::string id(prefix);
  unsigned char bytes[64];
  while (id.size() < prefix.size() + static_cast<size_t>(num_chars)) {
    CHECK(RAND_bytes(bytes, sizeof(bytes)) == 1) << "RAND_bytes failed";
    for (unsigned char byte : bytes) {
      if (byte < limit && id.size() < prefix.size() + static_cast<size_t>(num_chars)) {
        id += alphabet[byte % alphabet.size()];
      }
    }
  }
  return id;
}

}  // namespace surge
