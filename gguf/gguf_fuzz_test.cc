// Damaged GGUF files must give errors, never crashes or huge allocations: truncations at
// every 1/64 of a valid file and random byte flips in its header. Run under the
// SURGE_SANITIZE build to catch out-of-bounds reads.
#include <random>

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace surge {
namespace {

std::vector<uint8_t> ValidFile() {
  GgufWriter w(64);
  w.SetString("general.architecture", "qwen2");
  w.SetU32("qwen2.block_count", 2);
  w.SetF32("qwen2.rope.freq_base", 10000.0f);
  w.SetBool("tokenizer.ggml.add_bos_token", false);
  w.SetStringArray("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b", "ab"});
  std::vector<float> scores = {0, 0, -1, -2, -3};
  w.SetF32Array("tokenizer.ggml.scores", scores);
  w.SetNestedStringArray("x.nested", {{"p", "q"}, {}});
  std::vector<uint8_t> data(34 * 4, 0x11);
  EXPECT_TRUE(w.AddTensor("blk.0.attn_q.weight", {64, 2}, GgmlType::kQ8_0, data).ok());
  EXPECT_TRUE(w.AddTensor("output_norm.weight", {64}, GgmlType::kF32,
                          std::vector<uint8_t>(256, 0)).ok());
  return w.Serialize();
}

TEST(GgufFuzzTest, TruncationsFailCleanly) {
  std::vector<uint8_t> valid = ValidFile();
  ASSERT_TRUE(GgufFile::Parse(valid, "v.gguf").ok());
  for (int i = 0; i < 64; ++i) {
    size_t size = valid.size() * i / 64;
    std::vector<uint8_t> cut(valid.begin(), valid.begin() + size);  // exact-size buffer for ASan
    auto file = GgufFile::Parse(cut, "cut.gguf");
    ASSERT_FALSE(file.ok()) << "size " << size;
    EXPECT_EQ(file.status().message().rfind("cut.gguf: ", 0), 0u) << file.status().message();
  }
}

TEST(GgufFuzzTest, RandomHeaderFlipsNeverCrash) {
  std::vector<uint8_t> valid = ValidFile();
  auto parsed = GgufFile::Parse(valid, "v.gguf");
  ASSERT_TRUE(parsed.ok());
  size_t header_bytes = (*parsed)->data_offset_bytes();
  std::mt19937 rng(5);
  int num_ok = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes = valid;
    int num_flips = 1 + trial % 4;
    for (int f = 0; f < num_flips; ++f) {
      size_t at = rng() % header_bytes;
      bytes[at] = (trial % 3 == 0) ? static_cast<uint8_t>(rng()) : bytes[at] ^ (1u << (rng() % 8));
    }
    auto file = GgufFile::Parse(bytes, "flip.gguf");
    if (file.ok()) {
      ++num_ok;  // a flip in a value or name: still a valid file; walk it all
      for (const GgufTensorInfo& t : (*file)->tensors()) {
        ASSERT_LE(t.bytes.data() + t.bytes.size(), bytes.data() + bytes.size());
      }
    } else {
      EXPECT_FALSE(file.status().message().empty());
    }
  }
  EXPECT_LT(num_ok, 3000);
}

}  // namespace
}  // namespace surge
