// Ids for the Batch API's objects ("file-…", "batch_…", "batch_req_…") and its clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace surge::batch {

// `prefix` + 24 random letters and digits (OpenSSL's CSPRNG: not guessable).
std::string NewId(std::string_view prefix);
// Unix time in seconds, as OpenAI's `created_at` and the other timestamps.
int64_t UnixNowSeconds();

}  // namespace surge::batch
