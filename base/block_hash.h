// BlockHash: the chained content hash under which the engine's prefix cache files a full
// KV block -- shared by kv/ and by the router, which must compute the very same hashes
// from a prompt to know which engine holds its prefix (it never links engine code).
//
// A block's hash is BlockHash(parent's hash, its token ids); the first block's parent
// hash is the cache's seed. The values cross process boundaries (GET /kv_config,
// GET /kv_events): changing the function is a protocol change, so the test pins them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace surge {

// Names the function on the wire (GET /kv_config's "hash"), so that a router can refuse
// an engine whose hashes it cannot reproduce.
inline constexpr char kBlockHashName[] = "splitmix64-chain-v1";

// The seed of a cache that serves one model at one KV dtype (today's engine): 0. A seed
// must cover everything besides the tokens that changes a block's K/V (model, dtype, LoRA).
inline constexpr uint64_t kDefaultBlockHashSeed = 0;

// 64-bit, well mixed; `tokens` is one block's token ids.
uint64_t BlockHash(uint64_t parent_hash, std::span<const int32_t> tokens);

// The chained hashes of every full block of `tokens` ([tokens.size() / block_size]); a
// partly filled last block has none (the cache never files it). block_size > 0.
std::vector<uint64_t> ChainedBlockHashes(std::span<const int32_t> tokens, int32_t block_size,
                                         uint64_t seed = kDefaultBlockHashSeed);

// 16 lowercase hex digits: how hashes travel in JSON (a JavaScript number would lose bits).
std::string BlockHashToHex(uint64_t hash);
// The inverse; false unless `text` is 1 to 16 hex digits.
bool BlockHashFromHex(std::string_view text, uint64_t* hash);

}  // namespace surge
