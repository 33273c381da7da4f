// --kv-cache-memory / --max-body-size values.
#include "apps/byte_size.h"

#include <gtest/gtest.h>

#include "apps/serve_runtime.h"

namespace surge {
namespace {

TEST(ByteSizeTest, UnitsAndFractions) {
  EXPECT_EQ(ParseByteSize("2GiB", "f", true)->bytes, int64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("512MiB", "f", true)->bytes, int64_t{512} << 20);
  EXPECT_EQ(ParseByteSize("512m", "f", true)->bytes, int64_t{512} << 20);
  EXPECT_EQ(ParseByteSize("1.5GB", "f", true)->bytes, 1'500'000'000);
  EXPECT_EQ(ParseByteSize("65536", "f", true)->bytes, 65536);
  auto fraction = ParseByteSize("0.2", "f", true);
  ASSERT_TRUE(fraction.ok());
  EXPECT_TRUE(fraction->is_fraction);
  EXPECT_DOUBLE_EQ(fraction->fraction, 0.2);
  EXPECT_EQ(ParseByteSize("1", "f", true)->bytes, 1);  // no decimal point: bytes
}

TEST(ByteSizeTest, ErrorsNameTheFlag) {
  for (const char* bad : {"", "abc", "-5", "0", "2XB", "0.0", "1e400"}) {
    auto size = ParseByteSize(bad, "kv-cache-memory", true);
    ASSERT_FALSE(size.ok()) << bad;
    EXPECT_NE(size.status().message().find("--kv-cache-memory"), std::string::npos);
  }
  EXPECT_FALSE(ParseByteSize("0.5", "max-body-size", false).ok());
}

TEST(ByteSizeTest, ModelNameFromDirectory) {
  EXPECT_EQ(ModelNameFromDirectory("models/stories260K"), "stories260K");
  EXPECT_EQ(ModelNameFromDirectory("models/stories260K/"), "stories260K");
  EXPECT_EQ(ModelNameFromDirectory("/abs/Qwen2-0.5B"), "Qwen2-0.5B");
}

}  // namespace
}  // namespace surge
