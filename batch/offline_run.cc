#include "batch/offline_run.h"

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "batch/batch_input.h"
#include "batch/batch_json.h"
#include "batch/file_store.h"

namespace surge::batch {
namespace {

constexpr size_t kErrorsShown = 5;

Status ValidationError(const std::vector<BatchError>& errors) {
  std::string message = "the input does not validate:";
  for (size_t i = 0; i < errors.size() && i < kErrorsShown; ++i) {
    message += "\n  " + (errors[i].line ? "line " + std::to_string(*errors[i].line) + ": " : "") + errors[i].message;
  }
  if (errors.size() > kErrorsShown) message += "\n  ... and " + std::to_string(errors.size() - kErrorsShown) + " more";
  return InvalidArgumentError(message);
}

// The answers as they come, by input position.
struct Results {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<LineResult> by_index;  // guarded by mu
  int64_t num_done = 0;              // guarded by mu
};

}  // namespace

StatusOr<OfflineRunSummary> RunBatchFile(const OfflineRunOptions& options) {
  std::ifstream file(options.input_path, std::ios::binary);
  if (!file) return NotFoundError("cannot read " + options.input_path);
  std::ostringstream text;
  text << file.rdbuf();
  ParsedBatchInput parsed = ParseBatchInput(text.str(), "");
  if (!parsed.errors.empty()) return ValidationError(parsed.errors);
  const auto start = std::chrono::steady_clock::now();
  Results results;
  results.by_index.resize(parsed.lines.size());
  std::vector<DispatchedLine> lines;
  for (size_t i = 0; i < parsed.lines.size(); ++i) lines.push_back({std::to_string(i), parsed.lines[i]});
  LineDispatcher dispatcher(options.dispatch, [&results](const DispatchedLine& line, const LineAnswer& answer) {
    LineResult result = MakeLineResult(line.line, "", answer);
    std::lock_guard<std::mutex> lock(results.mu);
    results.by_index[std::stoul(line.owner)] = std::move(result);
    ++results.num_done;
    results.cv.notify_one();
  });
  dispatcher.Enqueue(std::move(lines));
  {
    std::unique_lock<std::mutex> lock(results.mu);
    results.cv.wait(lock, [&] { return results.num_done == static_cast<int64_t>(results.by_index.size()); });
  }
  dispatcher.Stop();
  OfflineRunSummary summary;
  std::string output;
  for (const LineResult& result : results.by_index) {
    ++(result.ok ? summary.num_completed : summary.num_failed);
    output += result.output_line + "\n";
  }
  RETURN_IF_ERROR(WriteFileAtomically(options.output_path, output));
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace surge::batch
