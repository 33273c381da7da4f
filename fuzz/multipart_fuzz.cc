// libFuzzer target: the multipart/form-data reader of POST /v1/files (batch/multipart.cc
// compiled in alone). The input's first line is the Content-Type value, the rest the body.
// Parts, when the body parses, are views inside it, at most MultipartLimits::max_parts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "batch/multipart.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  auto boundary = surge::batch::MultipartBoundary(input.substr(0, newline));
  if (!boundary.ok()) return 0;
  CHECK(!boundary->empty() && boundary->size() <= 70) << *boundary;
  const std::string_view body = input.substr(newline + 1);
  surge::batch::MultipartLimits limits;
  limits.max_parts = 8;
  limits.max_part_header_bytes = 1024;
  auto parts = surge::batch::ParseMultipart(body, *boundary, limits);
  if (!parts.ok()) {
    CHECK(parts.status().code() == surge::StatusCode::kInvalidArgument) << parts.status().ToString();
    return 0;
  }
  CHECK(parts->size() <= limits.max_parts);
  for (const surge::batch::MultipartPart& part : *parts) {
    CHECK(part.data.empty() || (part.data.data() >= body.data() && part.data.data() + part.data.size() <= body.data() + body.size()));
  }
  return 0;
}
