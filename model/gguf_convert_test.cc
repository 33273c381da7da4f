// The converter's metadata: the q4_k_m type mix and llama.cpp's tensor names. (Its tokenizer
// keys are tokenizer/'s, tested there.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/gguf_convert.h"
#include "model/gguf_names.h"

namespace surge {
namespace {

TEST(GgufConvertTest, Q4KMTypeMix) {
  const std::string hf = testing::TempDir() + "/gguf_convert_test_q4km";
  ASSERT_EQ(std::system(("/usr/bin/python3 tools/make_tiny_model.py --out " + hf +
                         " --hidden-size 256 --intermediate-size 512 --num-hidden-layers 8"
                         " --num-attention-heads 4 --num-key-value-heads 2 > /dev/null").c_str()),
            0);
  ASSERT_TRUE(ConvertHfToGguf(hf, hf + ".gguf", GgufFileType::kQ4_K_M).ok());
  auto file = GgufFile::Open(hf + ".gguf");
  ASSERT_TRUE(file.ok());
  auto type = [&](const std::string& name) { return (*file)->FindTensor(name)->type; };
  EXPECT_EQ(type("output.weight"), GgmlType::kQ6_K);
  EXPECT_EQ(type("token_embd.weight"), GgmlType::kQ4_K);
  // 8 layers: more bits in 0 (first eighth), 7 (last eighth), 3 and 6 ((i - 1) % 3 == 2).
  for (int i = 0; i < 8; ++i) {
    const bool more = i == 0 || i == 7 || i == 3 || i == 6;
    const std::string p = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(type(p + "attn_v.weight"), more ? GgmlType::kQ6_K : GgmlType::kQ4_K) << i;
    EXPECT_EQ(type(p + "ffn_down.weight"), more ? GgmlType::kQ6_K : GgmlType::kQ4_K) << i;
    EXPECT_EQ(type(p + "attn_q.weight"), GgmlType::kQ4_K) << i;
  }
  EXPECT_EQ(*(*file)->GetUint("general.file_type"), 15u);
}

TEST(GgufConvertTest, TensorNamesMapLikeLlamaCpp) {
  EXPECT_EQ(*GgufTensorNameForHf("model.layers.12.self_attn.q_proj.weight"), "blk.12.attn_q.weight");
  EXPECT_EQ(*GgufTensorNameForHf("model.layers.0.self_attn.k_proj.bias"), "blk.0.attn_k.bias");
  EXPECT_EQ(*GgufTensorNameForHf("model.layers.3.post_attention_layernorm.weight"), "blk.3.ffn_norm.weight");
  EXPECT_EQ(*GgufTensorNameForHf("model.layers.3.mlp.down_proj.weight"), "blk.3.ffn_down.weight");
  EXPECT_EQ(*GgufTensorNameForHf("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(*GgufTensorNameForHf("lm_head.weight"), "output.weight");
  EXPECT_FALSE(GgufTensorNameForHf("model.layers.3.self_attn.rotary_emb.inv_freq"));
  EXPECT_FALSE(GgufTensorNameForHf("model.layers.x.mlp.up_proj.weight"));
  EXPECT_FALSE(GgufTensorNameForHf("model.layers.3.weight"));
}

TEST(GgufConvertTest, FileTypeNames) {
  EXPECT_EQ(*ParseGgufFileType("q4_k_m"), GgufFileType::kQ4_K_M);
  EXPECT_THAT(ParseGgufFileType("q5_k").status().message(), testing::HasSubstr("unknown GGUF type 'q5_k'"));
}

}  // namespace
}  // namespace surge
