// The runner against a store and no server at all: expiry (on an injected clock) and a
// server that never answers both end the batch with every line in the error file.
#include "batch/batch_runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "batch/batch_json.h"
#include "obs/metrics.h"

namespace surge::batch {
namespace {

class BatchRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("batch_runner_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store_ = std::move(BatchStore::Open((dir_ / "batch.db").string())).value();
    files_ = std::make_unique<FileStore>(std::move(FileStore::Open((dir_ / "files").string())).value());
    std::string input;
    for (int i = 0; i < 3; ++i) {
      input += R"({"custom_id": "c)" + std::to_string(i) + R"(", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x"}})" "\n";
    }
    ASSERT_TRUE(files_->Write("file-in", input).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `batch` with a server that refuses connections until it is final (or 20 s).
  BatchRecord RunToEnd(BatchRecord batch, std::function<int64_t()> now_s, RunnerMetrics metrics = {}) {
    EXPECT_TRUE(store_->AddBatch(batch).ok());
    RunnerOptions options;
    options.metrics = metrics;
    options.dispatch.base_url = "http://127.0.0.1:1";  // nothing listens on port 1
    options.dispatch.max_backoff_ms = 50;
    options.now_s = std::move(now_s);
    BatchRunner runner(*store_, *files_, options);
    runner.Start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!IsTerminal(store_->GetBatch(batch.id)->status) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return *store_->GetBatch(batch.id);
  }
  std::vector<Json> ErrorLines(const BatchRecord& batch) {
    std::vector<Json> lines;
    std::string content = *files_->Read(batch.error_file_id);
    for (size_t start = 0, end; (end = content.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.push_back(Json::parse(content.substr(start, end - start)));
    }
    return lines;
  }

  std::filesystem::path dir_;
  std::unique_ptr<BatchStore> store_;
  std::unique_ptr<FileStore> files_;
};

TEST_F(BatchRunnerTest, PastItsWindowABatchExpiresWithItsLinesAsErrors) {
  BatchRecord batch{.id = "batch_e", .endpoint = "/v1/completions", .input_file_id = "file-in"};
  batch.expires_at = 1000;
  const BatchRecord done = RunToEnd(batch, [] { return int64_t{2000}; });
  EXPECT_EQ(done.status, BatchStatus::kExpired);
  EXPECT_EQ(done.expired_at, 2000);
  EXPECT_EQ(done.request_counts.total, 3);
  EXPECT_EQ(done.request_counts.failed, 3);
  EXPECT_TRUE(done.output_file_id.empty());
  const std::vector<Json> lines = ErrorLines(done);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["custom_id"], "c0") << "in line order";
  EXPECT_EQ(lines[2]["error"]["code"], "batch_expired");
  EXPECT_EQ(store_->GetFile(done.error_file_id)->purpose, "batch_output");
}

TEST_F(BatchRunnerTest, LinesThatNeverGetAnAnswerFailAfterTheirAttempts) {
  BatchRecord batch{.id = "batch_t", .endpoint = "/v1/completions", .input_file_id = "file-in"};
  const BatchRecord done = RunToEnd(batch, nullptr);
  EXPECT_EQ(done.status, BatchStatus::kCompleted);
  EXPECT_EQ(done.request_counts.failed, 3);
  const std::vector<Json> lines = ErrorLines(done);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[1]["response"].is_null());
  EXPECT_EQ(lines[1]["error"]["code"], "request_failed");
}

TEST_F(BatchRunnerTest, AMissingInputFileFailsValidation) {
  BatchRecord batch{.id = "batch_m", .endpoint = "/v1/completions", .input_file_id = "file-gone"};
  const BatchRecord done = RunToEnd(batch, nullptr);
  EXPECT_EQ(done.status, BatchStatus::kFailed);
  ASSERT_EQ(done.errors.size(), 1u);
  EXPECT_EQ(done.errors[0].code, "file_not_found");
}

// Issue 31: a batch whose input has `"stream": 1` stayed "validating" in the store and
// aborted surge route on every restart. Here the store holds it as a crashed router left it,
// is reopened (the restart, on the same data dir) and a runner starts on it: the batch ends
// failed with its line's error, counted, and a batch created after it still runs to its end.
TEST_F(BatchRunnerTest, APoisonedBatchLeftValidatingEndsFailedAndTheRunnerGoesOn) {
  const std::string poison =
      R"({"custom_id": "p", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x", "stream": 1}})" "\n";
  ASSERT_TRUE(files_->Write("file-poison", poison).ok());
  ASSERT_TRUE(store_->AddBatch({.id = "batch_p", .endpoint = "/v1/completions", .input_file_id = "file-poison"}).ok());
  store_.reset();
  store_ = std::move(BatchStore::Open((dir_ / "batch.db").string())).value();
  obs::Registry registry;
  obs::CounterFamily& errors = registry.AddCounterFamily("errors", "test", {"kind"});
  const RunnerMetrics metrics{&errors.WithLabels({"invalid_input"}), &errors.WithLabels({"internal"}),
                              &errors.WithLabels({"line_internal"})};
  const BatchRecord good = RunToEnd({.id = "batch_g", .endpoint = "/v1/completions", .input_file_id = "file-in"}, nullptr,
                                    metrics);
  EXPECT_EQ(good.status, BatchStatus::kCompleted);
  EXPECT_EQ(good.request_counts.total, 3);
  const BatchRecord poisoned = *store_->GetBatch("batch_p");
  EXPECT_EQ(poisoned.status, BatchStatus::kFailed);
  ASSERT_EQ(poisoned.errors.size(), 1u);
  EXPECT_EQ(poisoned.errors[0].code, "invalid_body");
  EXPECT_EQ(poisoned.errors[0].param, "body.stream");
  EXPECT_EQ(poisoned.errors[0].line, 1);
  EXPECT_NE(poisoned.errors[0].message.find("must be a boolean"), std::string::npos) << poisoned.errors[0].message;
  EXPECT_EQ(errors.WithLabels({"invalid_input"}).value(), 1);
  EXPECT_EQ(errors.WithLabels({"internal"}).value(), 0);
}

}  // namespace
}  // namespace surge::batch
