// A bounded parser of multipart/form-data bodies (RFC 7578), for POST /v1/files. Parts are
// views into the body (no copies); the number of parts and the size of each part's header
// are capped before anything is scanned, so a hostile body costs one linear pass.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::batch {

struct MultipartPart {
  std::string name;          // Content-Disposition's name
  std::string filename;      // its filename ("" when none was given)
  std::string content_type;  // "" when none was given
  std::string_view data;     // the part's bytes: a view into the parsed body
};

struct MultipartLimits {
  size_t max_parts = 16;
  size_t max_part_header_bytes = 8 << 10;
};

// The boundary of a `Content-Type: multipart/form-data; boundary=...` value; INVALID_ARGUMENT
// when the type is another or the boundary is missing or longer than RFC 2046's 70 bytes.
StatusOr<std::string> MultipartBoundary(std::string_view content_type);

// INVALID_ARGUMENT, saying what is wrong, for a body that is not a complete, well-formed
// multipart body with this boundary or that exceeds the limits.
StatusOr<std::vector<MultipartPart>> ParseMultipart(std::string_view body, std::string_view boundary,
                                                    const MultipartLimits& limits = {});

}  // namespace surge::batch
