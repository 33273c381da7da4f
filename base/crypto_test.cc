// SHA-256 against FIPS 180-4 / hashlib vectors (every padding boundary), the constant-time
// comparison's answers and the random ids' alphabet and spread.
#include "base/crypto.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace surge {
namespace {

std::string Hex(const Sha256Digest& digest) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Hex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(Sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// 55 bytes pad into one block, 56 need a second; 63, 64 and 119 straddle the others.
TEST(Sha256Test, PaddingBoundaries) {
  EXPECT_EQ(Hex(Sha256(std::string(55, 'a'))), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Hex(Sha256(std::string(56, 'a'))), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Hex(Sha256(std::string(63, 'a'))), "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(Hex(Sha256(std::string(64, 'a'))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(Hex(Sha256(std::string(119, 'a'))), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
}

TEST(Sha256Test, ConstantTimeEqualsAnswersCorrectly) {
  const Sha256Digest a = Sha256("key-a");
  Sha256Digest b = a;
  EXPECT_TRUE(ConstantTimeEquals(a, b));
  b[0] ^= 1;  // first byte differs
  EXPECT_FALSE(ConstantTimeEquals(a, b));
  b = a;
  b[31] ^= 0x80;  // only the last byte differs: an early-exit bug would still answer right,
  EXPECT_FALSE(ConstantTimeEquals(a, b));  // a last-byte-ignoring one would not
  EXPECT_FALSE(ConstantTimeEquals(std::span<const uint8_t>(a).first(31), a));
  EXPECT_TRUE(ConstantTimeEquals(std::span<const uint8_t>(), std::span<const uint8_t>()));
  for (int i = 0; i < 32; ++i) {
    b = a;
    b[i] ^= static_cast<uint8_t>(1 << (i % 8));
    EXPECT_FALSE(ConstantTimeEquals(a, b)) << i;
  }
  EXPECT_TRUE(ConstantTimeEquals(std::string_view("sk-one"), std::string_view("sk-one")));
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("sk-one"), std::string_view("sk-onf")));
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("sk-one"), std::string_view("sk-on")));
}

TEST(RandomIdTest, PrefixLengthAndAlphabet) {
  const std::string id = RandomId("file-", 24, "abc");
  ASSERT_EQ(id.size(), 29u);
  EXPECT_EQ(id.substr(0, 5), "file-");
  EXPECT_EQ(id.find_first_not_of("abc", 5), std::string::npos);
  EXPECT_EQ(RandomId("x", 0, "ab"), "x");
}

// 2,000 ids of 24 characters from 62: a repeat or an unused character would mean a broken draw.
TEST(RandomIdTest, IdsDifferAndUseTheWholeAlphabet) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::set<std::string> ids;
  std::set<char> seen;
  for (int i = 0; i < 2000; ++i) {
    const std::string id = RandomId("", 24, alphabet);
    ids.insert(id);
    seen.insert(id.begin(), id.end());
  }
  EXPECT_EQ(ids.size(), 2000u);
  EXPECT_EQ(seen.size(), alphabet.size());
}

}  // namespace
}  // namespace surge
