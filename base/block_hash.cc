#include "base/block_hash.h"

#include <charconv>

#include "base/check.h"

namespace surge {
namespace {

// splitmix64's finalizer: every input bit affects every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t BlockHash(uint64_t parent_hash, std::span<const int32_t> tokens) {
  uint64_t h = Mix(parent_hash ^ 0x9e3779b97f4a7c15ULL);
  for (int32_t token : tokens) h = Mix(h ^ static_cast<uint32_t>(token)) + 0x9e3779b97f4a7c15ULL;
  return Mix(h ^ tokens.size());
}

std::vector<uint64_t> ChainedBlockHashes(std::span<const int32_t> tokens, int32_t block_size, uint64_t seed) {
  CHECK_GT(block_size, 0);
  const size_t num_blocks = tokens.size() / static_cast<size_t>(block_size);
  std::vector<uint64_t> hashes;
  hashes.reserve(num_blocks);
  uint64_t parent = seed;
  for (size_t i = 0; i < num_blocks; ++i) {
    parent = BlockHash(parent, tokens.subspan(i * block_size, block_size));
    hashes.push_back(parent);
  }
  return hashes;
}

std::string BlockHashToHex(uint64_t hash) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) text[i] = kDigits[hash & 0xf];
  return text;
}

bool BlockHashFromHex(std::string_view text, uint64_t* hash) {
  if (text.empty() || text.size() > 16) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *hash, 16);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace surge
