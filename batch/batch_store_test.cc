#include "batch/batch_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "batch/batch_json.h"
#include "batch/file_store.h"

namespace surge::batch {
namespace {

class BatchStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("batch_store_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    StatusOr<std::unique_ptr<BatchStore>> store = BatchStore::Open((dir_ / "batch.db").string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  // A batch in progress with `num_lines` lines "c1".."cN".
  void AddRunningBatch(const std::string& id, int num_lines) {
    ASSERT_TRUE(store_->AddBatch({.id = id, .endpoint = "/v1/completions", .input_file_id = "file-x"}).ok());
    std::vector<BatchLine> lines;
    for (int i = 1; i <= num_lines; ++i) lines.push_back({i, "c" + std::to_string(i), "/v1/completions", "{}"});
    auto start = [num_lines](BatchRecord& b) {
      b.status = BatchStatus::kInProgress;
      b.request_counts.total = num_lines;
      return OkStatus();
    };
    ASSERT_TRUE(store_->AddLines(id, lines, start).ok());
  }
  LineResult Result(const std::string& batch, int64_t line_no, bool ok) {
    return {batch, line_no, ok, R"({"custom_id": "c)" + std::to_string(line_no) + "\"}"};
  }

  std::filesystem::path dir_;
  std::unique_ptr<BatchStore> store_;
};

TEST_F(BatchStoreTest, FilesAddGetListDelete) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(store_->AddFile({"file-" + std::to_string(i), 10 + i, 100, "f.jsonl", i == 2 ? "batch_output" : "batch"}).ok());
  }
  EXPECT_EQ(store_->GetFile("file-1")->bytes, 11);
  EXPECT_EQ(store_->GetFile("file-9").status().code(), StatusCode::kNotFound);
  StatusOr<std::vector<FileRecord>> all = store_->ListFiles("", "", 10);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, "file-2") << "newest first";
  EXPECT_EQ(store_->ListFiles("batch", "", 10)->size(), 2u);
  EXPECT_EQ(store_->ListFiles("", "file-2", 1)->at(0).id, "file-1");
  EXPECT_TRUE(store_->DeleteFile("file-1").ok());
  EXPECT_EQ(store_->DeleteFile("file-1").code(), StatusCode::kNotFound);
}

TEST_F(BatchStoreTest, BatchesListNewestFirstWithACursor) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->AddBatch({.id = "batch_" + std::to_string(i)}).ok());
  StatusOr<std::vector<BatchRecord>> page = store_->ListBatches("", 2);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].id, "batch_4");
  EXPECT_EQ(store_->ListBatches("batch_3", 10)->size(), 3u);
  EXPECT_EQ(store_->ListBatches("batch_0", 10)->size(), 0u);
  EXPECT_EQ(store_->BatchesWithStatus({BatchStatus::kValidating})->at(0).id, "batch_0") << "oldest first";
}

TEST_F(BatchStoreTest, UpdateIsAtomicAndARefusedChangeWritesNothing) {
  ASSERT_TRUE(store_->AddBatch({.id = "batch_a"}).ok());
  auto refuse = [](BatchRecord& b) {
    b.status = BatchStatus::kCancelling;
    return InvalidArgumentError("no");
  };
  EXPECT_FALSE(store_->UpdateBatch("batch_a", refuse).ok());
  EXPECT_EQ(store_->GetBatch("batch_a")->status, BatchStatus::kValidating);
  EXPECT_EQ(store_->BatchesWithStatus({BatchStatus::kCancelling})->size(), 0u);
}

TEST_F(BatchStoreTest, AResultCommitsWithItsStateAndCountsOnce) {
  AddRunningBatch("batch_a", 4);
  EXPECT_EQ(*store_->NumPendingLines("batch_a"), 4);
  EXPECT_EQ(*store_->CommitResults({Result("batch_a", 1, true), Result("batch_a", 3, false)}), 2);
  EXPECT_EQ(*store_->CommitResults({Result("batch_a", 1, false)}), 0) << "a done line keeps its first result";
  BatchRecord batch = *store_->GetBatch("batch_a");
  EXPECT_EQ(batch.request_counts.completed, 1);
  EXPECT_EQ(batch.request_counts.failed, 1);
  StatusOr<std::vector<BatchLine>> pending = store_->PendingLines("batch_a", 0, 10);
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].line_no, 2);
  EXPECT_EQ((*pending)[1].line_no, 4);
  EXPECT_EQ(store_->PendingLines("batch_a", 2, 10)->size(), 1u);
  std::vector<std::string> ok_lines;
  ASSERT_TRUE(store_->ForEachResult("batch_a", true, [&](std::string_view l) { ok_lines.emplace_back(l); }).ok());
  EXPECT_EQ(ok_lines, std::vector<std::string>{R"({"custom_id": "c1"})"});
}

TEST_F(BatchStoreTest, ResumeAfterReopenFromTheLinesNotDone) {
  AddRunningBatch("batch_a", 100);
  std::vector<LineResult> results;
  for (int i = 1; i <= 60; ++i) results.push_back(Result("batch_a", i, i % 7 != 0));
  ASSERT_TRUE(store_->CommitResults(results).ok());
  Reopen();  // as after a crash: nothing in memory survives
  EXPECT_EQ(store_->GetBatch("batch_a")->status, BatchStatus::kInProgress);
  EXPECT_EQ(*store_->NumPendingLines("batch_a"), 40);
  EXPECT_EQ(store_->PendingLines("batch_a", 0, 1)->at(0).line_no, 61);
  BatchRecord batch = *store_->GetBatch("batch_a");
  EXPECT_EQ(batch.request_counts.completed + batch.request_counts.failed, 60);
}

TEST_F(BatchStoreTest, ARolledBackTransactionLeavesLinesAndBatchUnchanged) {
  ASSERT_TRUE(store_->AddBatch({.id = "batch_a"}).ok());
  std::vector<BatchLine> lines = {{1, "a", "/v1/completions", "{}"}};
  auto fail = [](BatchRecord&) { return InternalError("crash midway"); };
  EXPECT_FALSE(store_->AddLines("batch_a", lines, fail).ok());
  EXPECT_EQ(*store_->NumPendingLines("batch_a"), 0) << "the lines went with the refused change";
  ASSERT_TRUE(store_->FinishBatch("batch_a", {{"file-out", 1, 1, "o", "batch_output"}}, fail).status().code() ==
              StatusCode::kInternal);
  EXPECT_EQ(store_->GetFile("file-out").status().code(), StatusCode::kNotFound);
}

TEST_F(BatchStoreTest, FileStoreWritesWholeFilesAndListsOnlyIds) {
  StatusOr<FileStore> files = FileStore::Open((dir_ / "files").string());
  ASSERT_TRUE(files.ok());
  ASSERT_TRUE(files->Write("file-a", "hello").ok());
  ASSERT_TRUE(files->Write("file-a", "hello again").ok());
  EXPECT_EQ(*files->Read("file-a"), "hello again");
  { std::ofstream((dir_ / "files" / "file-b.tmp").string()) << "half"; }
  StatusOr<FileStore> reopened = FileStore::Open((dir_ / "files").string());
  EXPECT_EQ(reopened->Ids(), std::vector<std::string>{"file-a"});
  EXPECT_FALSE(std::filesystem::exists(dir_ / "files" / "file-b.tmp")) << "a crash's temporary is removed";
  EXPECT_TRUE(reopened->Remove("file-a").ok());
  EXPECT_EQ(reopened->Read("file-a").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(IsSafeId("../etc"));
  EXPECT_TRUE(IsSafeId("file-Ab_9"));
}

}  // namespace
}  // namespace surge::batch
