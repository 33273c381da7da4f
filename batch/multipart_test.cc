#include "batch/multipart.h"

#include <gtest/gtest.h>

namespace surge::batch {
namespace {

const std::string kBody =
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"purpose\"\r\n\r\n"
    "batch\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"file\"; filename=\"in \\\"1\\\".jsonl\"\r\n"
    "Content-Type: application/octet-stream\r\n\r\n"
    "{\"a\":1}\r\n{\"b\":2}\n\r\n"
    "--XyZ--\r\n";

TEST(MultipartTest, BoundaryFromContentType) {
  EXPECT_EQ(*MultipartBoundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(*MultipartBoundary("Multipart/Form-Data; charset=utf-8; boundary=\"a b;c\""), "a b;c");
  EXPECT_FALSE(MultipartBoundary("application/json").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/form-data").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary=" + std::string(71, 'x')).ok());
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary=\"open").ok());
}

TEST(MultipartTest, PartsWithNamesFilenamesAndBytes) {
  StatusOr<std::vector<MultipartPart>> parts = ParseMultipart(kBody, "XyZ");
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "purpose");
  EXPECT_EQ((*parts)[0].data, "batch");
  EXPECT_EQ((*parts)[1].name, "file");
  EXPECT_EQ((*parts)[1].filename, "in \"1\".jsonl");
  EXPECT_EQ((*parts)[1].content_type, "application/octet-stream");
  EXPECT_EQ((*parts)[1].data, "{\"a\":1}\r\n{\"b\":2}\n") << "CRLF inside the data stays";
}

TEST(MultipartTest, MalformedBodiesAreRefusedSayingWhy) {
  for (const std::string& bad : {
           std::string("garbage"),
           std::string("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end"),
           std::string("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\nno blank line"),
           std::string("--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--"),
           std::string("--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--XyZ--"),
           std::string("--XyZ\r\nno colon here\r\n\r\nx\r\n--XyZ--"),
           std::string("--XyZjunk"),
           std::string(""),
       }) {
    StatusOr<std::vector<MultipartPart>> parts = ParseMultipart(bad, "XyZ");
    EXPECT_FALSE(parts.ok()) << bad;
    if (!parts.ok()) {
      EXPECT_NE(parts.status().message().find("multipart"), std::string::npos);
    }
  }
}

TEST(MultipartTest, LimitsOnPartsAndHeaders) {
  std::string many;
  for (int i = 0; i < 5; ++i) many += "--B\r\nContent-Disposition: form-data; name=\"p\"\r\n\r\nx\r\n";
  many += "--B--";
  EXPECT_TRUE(ParseMultipart(many, "B", {.max_parts = 5}).ok());
  EXPECT_FALSE(ParseMultipart(many, "B", {.max_parts = 4}).ok());
  const std::string long_header =
      "--B\r\nContent-Disposition: form-data; name=\"p\"\r\nX-Pad: " + std::string(9000, 'p') + "\r\n\r\nx\r\n--B--";
  EXPECT_FALSE(ParseMultipart(long_header, "B").ok());
  EXPECT_TRUE(ParseMultipart(long_header, "B", {.max_part_header_bytes = 10'000}).ok());
}

}  // namespace
}  // namespace surge::batch
