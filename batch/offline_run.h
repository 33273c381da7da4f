// RunBatchFile: `surge batch run IN.jsonl OUT.jsonl --url URL` (vLLM's run-batch): every line
// of an OpenAI batch input file sent to one OpenAI-compatible server at batch tier, with the
// same in-flight window and retries as the Batch API, and one output file of OpenAI's batch
// output lines (answers and errors together) in input order.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "batch/line_dispatcher.h"

namespace surge::batch {

struct OfflineRunOptions {
  std::string input_path;
  std::string output_path;
  DispatchOptions dispatch;  // base_url: the server
};

struct OfflineRunSummary {
  int64_t num_completed = 0;  // 2xx answers
  int64_t num_failed = 0;     // the rest (their lines carry `error`)
  double seconds = 0;
};

// INVALID_ARGUMENT listing the first problems when the input does not validate (nothing
// is sent then); NOT_FOUND for a missing input; the output is written atomically.
StatusOr<OfflineRunSummary> RunBatchFile(const OfflineRunOptions& options);

}  // namespace surge::batch
