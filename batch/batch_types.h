// The Batch API's records: uploaded files, batches and their lines, as the store keeps them
// and the routes show them (batch_json.h has their OpenAI JSON).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::batch {

// OpenAI's File object.
struct FileRecord {
  std::string id{};        // "file-..."
  int64_t bytes = 0;
  int64_t created_at = 0;  // Unix seconds
  std::string filename{};
  std::string purpose{};   // "batch" (uploads) or "batch_output" (a batch's output and error files)
};

enum class BatchStatus { kValidating, kFailed, kInProgress, kFinalizing, kCompleted, kExpired, kCancelling, kCancelled };

std::string_view BatchStatusName(BatchStatus status);
StatusOr<BatchStatus> ParseBatchStatus(std::string_view name);
// failed, completed, expired, cancelled: nothing more happens to the batch.
bool IsTerminal(BatchStatus status);

// One entry of a batch's `errors.data` (a validation failure), and of nothing else.
struct BatchError {
  std::string code{};     // "invalid_json_line", "duplicate_custom_id", ...
  std::string message{};
  std::string param{};    // "" when none
  std::optional<int64_t> line{};  // 1-based line of the input file
};

struct RequestCounts {
  int64_t total = 0;
  int64_t completed = 0;
  int64_t failed = 0;
};

// OpenAI's Batch object. Times are Unix seconds; nullopt is JSON null.
struct BatchRecord {
  std::string id{};  // "batch_..."
  std::string endpoint{};
  std::string input_file_id{};
  std::string completion_window = "24h";
  BatchStatus status = BatchStatus::kValidating;
  std::string output_file_id{};  // "" until finalized with at least one success
  std::string error_file_id{};   // "" until finalized with at least one failure
  std::vector<BatchError> errors{};
  int64_t created_at = 0;
  std::optional<int64_t> in_progress_at{}, expires_at{}, finalizing_at{}, completed_at{}, failed_at{}, expired_at{},
      cancelling_at{}, cancelled_at{};
  RequestCounts request_counts{};
  std::string metadata_json = "null";  // an object of strings, or null
};

// One request of a batch's input file, validated.
struct BatchLine {
  int64_t line_no = 0;  // 1-based line of the input file: the output's order
  std::string custom_id{};
  std::string url{};   // "/v1/chat/completions"
  std::string body{};  // the request body, compact JSON
};

// A line's committed outcome: the JSONL line of the output file (ok) or the error file.
struct LineResult {
  std::string batch_id{};
  int64_t line_no = 0;
  bool ok = false;
  std::string output_line{};  // one JSON object, no newline
};

}  // namespace surge::batch
