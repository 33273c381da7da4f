#include "model/weight_store.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/config.h"

namespace surge {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
namespace fs = std::filesystem;

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Each test writes its model directory under a fresh temporary folder.
class WeightStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::temp_directory_path() /
            ("surge_weight_store_" + std::to_string(::getpid()) + "_" + info->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string PathOf(const std::string& file) const { return dir_ + "/" + file; }

  void WriteText(const std::string& file, const std::string& text) {
    std::ofstream(PathOf(file), std::ios::binary) << text;
  }
  // A raw safetensors file: length prefix, header text, data.
  void WriteRaw(const std::string& file, const std::string& header,
                const std::vector<uint8_t>& data) {
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(uint64_t(header.size()) >> (8 * i));
    bytes += header;
    bytes.append(data.begin(), data.end());
    WriteText(file, bytes);
  }
  // A well-formed safetensors file with the tensors laid out back to back.
  void WriteTensors(const std::string& file, const std::vector<TensorSpec>& tensors) {
    Json header = Json::object();
    std::vector<uint8_t> data;
    for (const TensorSpec& t : tensors) {
      header[t.name] = {{"dtype", t.dtype},
                        {"shape", t.shape},
                        {"data_offsets", {data.size(), data.size() + t.data.size()}}};
      data.insert(data.end(), t.data.begin(), t.data.end());
    }
    WriteRaw(file, header.dump(), data);
  }
  StatusOr<std::unique_ptr<WeightStore>> Open() { return WeightStore::Open(dir_); }

  // Opening must fail with `code`, naming `file` and containing `text`.
  void ExpectOpenError(StatusCode code, const std::string& file, const std::string& text) {
    StatusOr<std::unique_ptr<WeightStore>> store = Open();
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), code) << store.status().ToString();
    EXPECT_THAT(store.status().message(), HasSubstr(PathOf(file)));
    EXPECT_THAT(store.status().message(), HasSubstr(text));
  }

  std::string dir_;
};

const TensorSpec kSmall{"w", "F32", {2}, Bytes(std::vector<float>{1.5f, -2.0f})};

TEST_F(WeightStoreTest, BundledStoriesModel) {
  StatusOr<std::unique_ptr<WeightStore>> store = WeightStore::Open("models/stories260K");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->num_tensors(), 47u);
  for (const std::string& name : (*store)->Names()) {
    StatusOr<TensorView> view = (*store)->Get(name);
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(view->dtype, TensorDType::kF32) << name;
    EXPECT_EQ(view->bytes.size(), size_t(view->num_elements()) * 4) << name;
  }
  StatusOr<ModelConfig> config = LoadModelConfig("models/stories260K");
  ASSERT_TRUE(config.ok());
  StatusOr<std::vector<float>> embed = (*store)->LoadF32(
      "model.embed_tokens.weight", {config->vocab_size, config->hidden_size});
  ASSERT_TRUE(embed.ok()) << embed.status().ToString();
  EXPECT_EQ(embed->size(), 512u * 64u);
}

TEST_F(WeightStoreTest, LoadF32ConvertsF16AndBF16Exactly) {
  // 1, -2, 65504 (max), 2^-24 (min subnormal), -inf, 1/3 rounded to half.
  std::vector<uint16_t> half = {0x3c00, 0xc000, 0x7bff, 0x0001, 0xfc00, 0x3555};
  // 1, -3, 1/3 rounded to bf16, +inf.
  std::vector<uint16_t> bf16 = {0x3f80, 0xc040, 0x3eab, 0x7f80};
  WriteTensors("model.safetensors", {{"h", "F16", {2, 3}, Bytes(half)},
                                     {"b", "BF16", {4}, Bytes(bf16)}});
  StatusOr<std::unique_ptr<WeightStore>> store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const float inf = std::numeric_limits<float>::infinity();
  StatusOr<std::vector<float>> h = (*store)->LoadF32("h", {2, 3});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(*h, (std::vector<float>{1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24), -inf,
                                    0.333251953125f}));
  StatusOr<std::vector<float>> b = (*store)->LoadF32("b", {4});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(*b, (std::vector<float>{1.0f, -3.0f, 0.333984375f, inf}));
}

TEST_F(WeightStoreTest, ShardedDirectory) {
  WriteTensors("model-00001-of-00002.safetensors",
               {{"a", "F32", {2}, Bytes(std::vector<float>{1, 2})},
                {"b", "F32", {1}, Bytes(std::vector<float>{3})}});
  WriteTensors("model-00002-of-00002.safetensors",
               {{"c", "BF16", {1}, Bytes(std::vector<uint16_t>{0x4080})}});
  Json index = {{"metadata", {{"total_size", 14}}},
                {"weight_map",
                 {{"a", "model-00001-of-00002.safetensors"},
                  {"b", "model-00001-of-00002.safetensors"},
                  {"c", "model-00002-of-00002.safetensors"}}}};
  WriteText("model.safetensors.index.json", index.dump());
  StatusOr<std::unique_ptr<WeightStore>> store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->Names(), (std::vector<std::string>{"a", "b", "c"}));
  StatusOr<TensorView> c = (*store)->Get("c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->file, PathOf("model-00002-of-00002.safetensors"));
  StatusOr<std::vector<float>> c_values = (*store)->LoadF32("c", {1});
  ASSERT_TRUE(c_values.ok());
  EXPECT_EQ((*c_values)[0], 4.0f);
}

// --- Corruptions: each must fail up front with the file and the problem named. ---

TEST_F(WeightStoreTest, TruncatedFile) {
  WriteText("model.safetensors", "abc");
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors", "shorter than the 8-byte");
}

TEST_F(WeightStoreTest, TruncatedHeader) {
  WriteRaw("model.safetensors", R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
           {});
  // Cut the file inside the header.
  fs::resize_file(PathOf("model.safetensors"), 20);
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors", "runs past the end of the file");
}

TEST_F(WeightStoreTest, OversizedHeaderLength) {
  WriteText("model.safetensors", std::string("\x00\x00\x00\x40\x00\x00\x00\x00{}", 10));
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors", "exceeds the 100000000-byte limit");
}

TEST_F(WeightStoreTest, HeaderNotJson) {
  WriteRaw("model.safetensors", "this is not json", {});
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors", "header is not valid JSON");
}

TEST_F(WeightStoreTest, OverlappingOffsets) {
  WriteRaw("model.safetensors",
           R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
               "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
           std::vector<uint8_t>(12));
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors", "'a' [0, 8) and 'b' [4, 12) overlap");
}

TEST_F(WeightStoreTest, OutOfRangeOffsets) {
  WriteRaw("model.safetensors", R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})",
           std::vector<uint8_t>(8));
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors",
                  "tensor 'w': data_offsets [0,16] out of range");
}

TEST_F(WeightStoreTest, UnknownDType) {
  WriteRaw("model.safetensors", R"({"x": {"dtype": "I16", "shape": [4], "data_offsets": [0, 8]}})",
           std::vector<uint8_t>(8));
  ExpectOpenError(StatusCode::kUnimplemented, "model.safetensors",
                  "unsupported dtype 'I16' for tensor 'x'");
}

TEST_F(WeightStoreTest, ByteSizeMismatch) {
  WriteRaw("model.safetensors", R"({"w": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 8]}})",
           std::vector<uint8_t>(8));
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors",
                  "tensor 'w': holds 8 bytes but BF16[3] needs 6");
}

TEST_F(WeightStoreTest, NegativeDimension) {
  WriteRaw("model.safetensors", R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})",
           std::vector<uint8_t>(8));
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors",
                  "tensor 'w': 'shape' must hold non-negative integers");
}

TEST_F(WeightStoreTest, MissingTensor) {
  WriteTensors("model.safetensors", {kSmall});
  StatusOr<std::unique_ptr<WeightStore>> store = Open();
  ASSERT_TRUE(store.ok());
  StatusOr<TensorView> view = (*store)->Get("lm_head.weight");
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(view.status().message(), HasSubstr(dir_));
  EXPECT_THAT(view.status().message(), HasSubstr("no tensor 'lm_head.weight'"));
  EXPECT_EQ((*store)->LoadF32("lm_head.weight", {2}).status().code(), StatusCode::kNotFound);
}

TEST_F(WeightStoreTest, WrongShape) {
  WriteTensors("model.safetensors", {kSmall});
  StatusOr<std::unique_ptr<WeightStore>> store = Open();
  ASSERT_TRUE(store.ok());
  StatusOr<std::vector<float>> values = (*store)->LoadF32("w", {1, 2});
  ASSERT_FALSE(values.ok());
  EXPECT_EQ(values.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(values.status().message(), HasSubstr(PathOf("model.safetensors")));
  EXPECT_THAT(values.status().message(), HasSubstr("tensor 'w' has shape [2], expected [1, 2]"));
}

TEST_F(WeightStoreTest, IndexNamesMissingShard) {
  WriteTensors("model-00001-of-00002.safetensors", {kSmall});
  Json index = {{"weight_map",
                 {{"w", "model-00001-of-00002.safetensors"},
                  {"v", "model-00002-of-00002.safetensors"}}}};
  WriteText("model.safetensors.index.json", index.dump());
  ExpectOpenError(StatusCode::kNotFound, "model.safetensors.index.json",
                  "shard 'model-00002-of-00002.safetensors' is missing");
}

TEST_F(WeightStoreTest, IndexNamesTensorAbsentFromShard) {
  WriteTensors("shard-a.safetensors", {kSmall});
  WriteTensors("shard-b.safetensors", {{"v", "F32", {1}, Bytes(std::vector<float>{0})}});
  Json index = {{"weight_map",
                 {{"w", "shard-a.safetensors"},
                  {"v", "shard-b.safetensors"},
                  {"u", "shard-b.safetensors"}}}};
  WriteText("model.safetensors.index.json", index.dump());
  ExpectOpenError(StatusCode::kNotFound, "model.safetensors.index.json",
                  "tensor 'u' is not in its shard 'shard-b.safetensors'");
}

TEST_F(WeightStoreTest, IndexShardPathEscapesDirectory) {
  Json index = {{"weight_map", {{"w", "../elsewhere/model.safetensors"}}}};
  WriteText("model.safetensors.index.json", index.dump());
  ExpectOpenError(StatusCode::kInvalidArgument, "model.safetensors.index.json",
                  "shard path '../elsewhere/model.safetensors' is outside the model directory");
}

TEST_F(WeightStoreTest, DuplicateTensorAcrossShards) {
  WriteTensors("shard-a.safetensors", {kSmall});
  WriteTensors("shard-b.safetensors", {kSmall});
  Json index = {{"weight_map", {{"w", "shard-a.safetensors"}, {"x", "shard-b.safetensors"}}}};
  WriteText("model.safetensors.index.json", index.dump());
  ExpectOpenError(StatusCode::kDataLoss, "shard-b.safetensors",
                  "tensor 'w' is also in " + PathOf("shard-a.safetensors"));
}

TEST_F(WeightStoreTest, IndexNotJson) {
  WriteText("model.safetensors.index.json", "{\"weight_map\": ");
  ExpectOpenError(StatusCode::kDataLoss, "model.safetensors.index.json", "not valid JSON");
}

TEST_F(WeightStoreTest, NoSafetensorsAtAll) {
  WriteText("config.json", "{}");
  StatusOr<std::unique_ptr<WeightStore>> store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(store.status().message(), HasSubstr(dir_ + ": no model.safetensors"));
}

// Config corruptions on disk: LoadModelConfig names the file it read.
TEST_F(WeightStoreTest, ConfigCorruptionsNameTheFile) {
  std::string path = PathOf("config.json");
  WriteText("config.json", R"({"model_type": "llama", "hidden_size": 64})");
  Status missing = LoadModelConfig(dir_).status();
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr(path + ": missing key 'intermediate_size'"));

  WriteText("config.json", R"({"model_type": "gpt2"})");
  Status unknown = LoadModelConfig(dir_).status();
  EXPECT_EQ(unknown.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(unknown.message(), HasSubstr(path + ": unsupported model_type 'gpt2' (supported: "
                                                  "llama, qwen2, qwen3, deepseek_v2, deepseek_v3)"));

  WriteText("config.json", R"({"model_type": "llama", "hidden_size": [64]})");
  Status wrong_type = LoadModelConfig(dir_).status();
  EXPECT_EQ(wrong_type.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_type.message(),
              HasSubstr(path + ": key 'hidden_size' must be an integer, got array"));
}

}  // namespace
}  // namespace surge
