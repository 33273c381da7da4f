#include "gguf/gguf_file.h"

#include <cstring>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf/gguf_writer.h"

namespace surge {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 7);
  return out;
}

// Every value type, a nested array, and tensors of several types and alignments.
GgufWriter FullWriter(uint32_t alignment = 32, uint32_t version = 3) {
  GgufWriter w(alignment, version);
  w.SetString("general.architecture", "llama");
  w.SetU8("t.u8", 200);
  w.SetI8("t.i8", -100);
  w.SetU16("t.u16", 60000);
  w.SetI16("t.i16", -30000);
  w.SetU32("t.u32", 4000000000u);
  w.SetI32("t.i32", -2000000000);
  w.SetU64("t.u64", 1ull << 60);
  w.SetI64("t.i64", -(1ll << 60));
  w.SetF32("t.f32", 1.5f);
  w.SetF64("t.f64", -2.25);
  w.SetBool("t.bool", true);
  w.SetStringArray("t.strings", {"a", "", "héllo"});
  std::vector<float> floats = {0.5f, -1.0f};
  w.SetF32Array("t.floats", floats);
  std::vector<int32_t> ints = {3, -4, 5};
  w.SetI32Array("t.ints", ints);
  w.SetNestedStringArray("t.nested", {{"x"}, {"y", "z"}});
  EXPECT_TRUE(w.AddTensor("a", {4, 3}, GgmlType::kF32, Bytes(48, 1)).ok());
  EXPECT_TRUE(w.AddTensor("b", {64, 2}, GgmlType::kQ8_0, Bytes(2 * 2 * 34, 2)).ok());
  EXPECT_TRUE(w.AddTensor("c", {256}, GgmlType::kQ4_K, Bytes(144, 3)).ok());
  EXPECT_TRUE(w.AddTensor("d", {5}, GgmlType::kBF16, Bytes(10, 4)).ok());
  return w;
}

TEST(GgufFileTest, RoundTripsEveryValueTypeAndTensor) {
  for (uint32_t version : {2u, 3u}) {
    for (uint32_t alignment : {32u, 64u, 1u}) {
      std::vector<uint8_t> bytes = FullWriter(alignment, version).Serialize();
      auto file = GgufFile::Parse(bytes, "mem.gguf");
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      const GgufFile& f = **file;
      EXPECT_EQ(f.version(), version);
      EXPECT_EQ(f.alignment(), alignment);
      EXPECT_EQ(*f.GetString("general.architecture"), "llama");
      EXPECT_EQ(*f.GetUint("t.u8"), 200u);
      EXPECT_EQ(*f.GetInt("t.i8"), -100);
      EXPECT_EQ(*f.GetUint("t.u16"), 60000u);
      EXPECT_EQ(*f.GetInt("t.i16"), -30000);
      EXPECT_EQ(*f.GetUint("t.u32"), 4000000000u);
      EXPECT_EQ(*f.GetInt("t.i32"), -2000000000);
      EXPECT_EQ(*f.GetUint("t.u64"), 1ull << 60);
      EXPECT_EQ(*f.GetInt("t.i64"), -(1ll << 60));
      EXPECT_EQ(*f.GetFloat("t.f32"), 1.5);
      EXPECT_EQ(*f.GetFloat("t.f64"), -2.25);
      EXPECT_TRUE(*f.GetBool("t.bool"));
      EXPECT_EQ(*f.GetStringArray("t.strings"), (std::vector<std::string>{"a", "", "héllo"}));
      EXPECT_EQ(*f.GetFloatArray("t.floats"), (std::vector<float>{0.5f, -1.0f}));
      EXPECT_EQ(*f.GetIntArray("t.ints"), (std::vector<int64_t>{3, -4, 5}));
      const GgufValue* nested = f.Find("t.nested");
      ASSERT_NE(nested, nullptr);
      ASSERT_EQ(nested->array_items.size(), 2u);
      EXPECT_EQ(nested->array_items[1].array_items[1].str, "z");
      ASSERT_EQ(f.tensors().size(), 4u);
      const GgufTensorInfo* b = *f.GetTensor("b");
      EXPECT_EQ(b->dims, (std::vector<int64_t>{64, 2}));
      EXPECT_EQ(b->type, GgmlType::kQ8_0);
      EXPECT_EQ(b->offset_bytes % alignment, 0u);
      EXPECT_EQ(std::vector<uint8_t>(b->bytes.begin(), b->bytes.end()), Bytes(136, 2));
      const GgufTensorInfo* d = f.FindTensor("d");
      EXPECT_EQ(std::vector<uint8_t>(d->bytes.begin(), d->bytes.end()), Bytes(10, 4));
      EXPECT_EQ((f.data_offset_bytes() + b->offset_bytes) % alignment, 0u);
    }
  }
}

TEST(GgufFileTest, TypedGettersNameKeyAndTypes) {
  std::vector<uint8_t> bytes = FullWriter().Serialize();
  auto file = GgufFile::Parse(bytes, "mem.gguf");
  ASSERT_TRUE(file.ok());
  Status missing = (*file)->GetInt("llama.block_count").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("'llama.block_count' is missing"));
  Status wrong = (*file)->GetString("t.u32").status();
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.message(), HasSubstr("'t.u32' should be string, but is u32"));
  EXPECT_THAT((*file)->GetFloatArray("t.strings").status().message(),
              HasSubstr("but is array[string]"));
  EXPECT_THAT((*file)->GetUint("t.i8").status().message(), HasSubstr("non-negative"));
  EXPECT_THAT((*file)->GetTensor("nope").status().message(), HasSubstr("tensor 'nope'"));
}

TEST(GgufFileTest, OpensFromDisk) {
  std::string path = ::testing::TempDir() + "/gguf_file_test_" + std::to_string(getpid()) + ".gguf";
  ASSERT_TRUE(FullWriter().WriteFile(path).ok());
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->tensors().size(), 4u);
  EXPECT_EQ((*file)->path(), path);
  std::remove(path.c_str());
  EXPECT_EQ(GgufFile::Open(path).status().code(), StatusCode::kNotFound);
}

// Helpers that damage a valid file at known places.
struct Damage {
  std::vector<uint8_t> bytes = FullWriter().Serialize();
  void SetU32(size_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }
  void SetU64(size_t at, uint64_t v) { std::memcpy(bytes.data() + at, &v, 8); }
  // Position of the tensor info of `name` (its name's length prefix).
  size_t TensorInfo(const std::string& name) {
    std::string needle = std::string("\x01\0\0\0\0\0\0\0", 8) + name;
    auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
    return static_cast<size_t>(it - bytes.begin());
  }
  Status Parse() { return GgufFile::Parse(bytes, "bad.gguf").status(); }
};

TEST(GgufFileTest, MalformedFilesGetClearErrors) {
  Damage magic;
  magic.bytes[0] = 'X';
  EXPECT_THAT(magic.Parse().message(), HasSubstr("bad.gguf: not a GGUF file: bad magic"));
  Damage version;
  version.SetU32(4, 1);
  EXPECT_EQ(version.Parse().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(version.Parse().message(), HasSubstr("unsupported GGUF version 1"));
  Damage counts;
  counts.SetU64(8, 1ull << 62);
  EXPECT_THAT(counts.Parse().message(), HasSubstr("absurd counts"));
  Damage type;
  type.SetU32(type.TensorInfo("c") + 9 + 4 + 8, 77);
  EXPECT_THAT(type.Parse().message(), HasSubstr("tensor 'c' has unknown tensor type 77"));
  Damage misaligned;
  size_t c_offset = misaligned.TensorInfo("c") + 9 + 4 + 8 + 4;
  misaligned.SetU64(c_offset, 320 + 4);
  EXPECT_THAT(misaligned.Parse().message(), HasSubstr("not a multiple of the alignment 32"));
  Damage range;
  range.SetU64(c_offset, 1ull << 40);
  EXPECT_THAT(range.Parse().message(), HasSubstr("runs past the end of the data section"));
  Damage overlap;
  overlap.SetU64(c_offset, 0);
  EXPECT_THAT(overlap.Parse().message(), HasSubstr("overlap"));
  Damage truncated;
  truncated.bytes.resize(truncated.bytes.size() - 25);  // past the 22 padding bytes
  EXPECT_THAT(truncated.Parse().message(), HasSubstr("tensor 'd' data"));
  EXPECT_EQ(truncated.Parse().code(), StatusCode::kDataLoss);
  Damage duplicate;
  duplicate.bytes[duplicate.TensorInfo("b") + 8] = 'a';
  EXPECT_THAT(duplicate.Parse().message(), HasSubstr("duplicate tensor 'a'"));
  Damage string_length;  // the architecture value's length
  string_length.SetU64(24 + 8 + 20 + 4, 1ull << 50);
  EXPECT_THAT(string_length.Parse().message(), HasSubstr("truncated: string 'general.architecture'"));
}

TEST(GgufFileTest, RejectsBadAlignmentAndRowsNotInBlocks) {
  GgufWriter w;
  w.SetU32("general.alignment", 24);
  EXPECT_THAT(GgufFile::Parse(w.Serialize(), "x.gguf").status().message(),
              HasSubstr("general.alignment 24 is not a power of two"));
  GgufWriter wrong_type;
  wrong_type.SetString("general.alignment", "32");
  EXPECT_THAT(GgufFile::Parse(wrong_type.Serialize(), "x.gguf").status().message(),
              HasSubstr("general.alignment must be u32, got string"));
  // Writers refuse a Q8_0 row of 48 values; hand-patch a valid file into one.
  GgufWriter rows;
  ASSERT_TRUE(rows.AddTensor("q", {64}, GgmlType::kQ8_0, Bytes(68, 0)).ok());
  std::vector<uint8_t> bytes = rows.Serialize();
  uint64_t bad_dim = 48;
  std::memcpy(bytes.data() + 24 + 8 + 1 + 4, &bad_dim, 8);
  EXPECT_THAT(GgufFile::Parse(bytes, "x.gguf").status().message(),
              HasSubstr("row length 48, not a multiple of its block size 32"));
  EXPECT_FALSE(rows.AddTensor("r", {48}, GgmlType::kQ8_0, Bytes(51, 0)).ok());
  EXPECT_FALSE(rows.AddTensor("q", {64}, GgmlType::kQ8_0, Bytes(68, 0)).ok());
}

TEST(GgufFileTest, EmptyFileAndHeaderOnly) {
  std::vector<uint8_t> empty;
  EXPECT_THAT(GgufFile::Parse(empty, "e.gguf").status().message(), HasSubstr("e.gguf: truncated"));
  GgufWriter w;
  auto file = GgufFile::Parse(w.Serialize(), "h.gguf");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE((*file)->tensors().empty());
}

}  // namespace
}  // namespace surge
