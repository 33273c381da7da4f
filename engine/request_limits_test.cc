#include "engine/request_limits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace surge {
namespace {

constexpr RequestLimitContext kContext{/*vocab_size=*/512, /*max_num_seqs=*/8};

EngineRequest Good() {
  EngineRequest request;
  request.prompt_ids = {1, 2, 3};
  request.stop.max_tokens = 16;
  return request;
}

Status Check(const std::function<void(EngineRequest&)>& edit) {
  EngineRequest request = Good();
  edit(request);
  return CheckRequestLimits(request, kContext);
}

TEST(RequestLimitsTest, EachLimitNamesItselfItsBoundsAndTheValue) {
  const struct {
    std::function<void(EngineRequest&)> edit;
    const char* message;
  } cases[] = {
      {[](EngineRequest& r) { r.n = 0; }, "n must be in [1, 8], got 0"},
      {[](EngineRequest& r) { r.n = 9; }, "n must be in [1, 8], got 9"},
      {[](EngineRequest& r) { r.prompt_logprobs = -2; }, "prompt_logprobs must be in [-1, 512], got -2"},
      {[](EngineRequest& r) { r.stop.max_tokens = 0; }, "max_tokens must be >= 1, got 0"},
      {[](EngineRequest& r) { r.stop.max_tokens = -1, r.prompt_logprobs = 0; }, "max_tokens must be >= 0, got -1"},
      {[](EngineRequest& r) { r.top_logprobs = 513; }, "top_logprobs must be in [-1, 512], got 513"},
      {[](EngineRequest& r) { r.sampling.temperature = -0.5; }, "temperature must be >= 0, got -0.5"},
      {[](EngineRequest& r) { r.sampling.temperature = INFINITY; }, "temperature must be >= 0, got inf"},
      {[](EngineRequest& r) { r.sampling.top_k = -2; }, "top_k must be in [-1, 2147483647], got -2"},
      {[](EngineRequest& r) { r.sampling.top_p = 0; }, "top_p must be in (0, 1], got 0"},
      {[](EngineRequest& r) { r.sampling.min_p = 1.5; }, "min_p must be in [0, 1], got 1.5"},
      {[](EngineRequest& r) { r.sampling.repetition_penalty = 0; }, "repetition_penalty must be > 0, got 0"},
      {[](EngineRequest& r) { r.sampling.presence_penalty = 2.5; }, "presence_penalty must be in [-2, 2], got 2.5"},
      {[](EngineRequest& r) { r.sampling.frequency_penalty = -3; }, "frequency_penalty must be in [-2, 2], got -3"},
      {[](EngineRequest& r) { r.constraint_start_token_id = 512; }, "constraint_start_token_id must be <= 511, got 512"},
  };
  for (const auto& c : cases) {
    const Status status = Check(c.edit);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(status.message(), c.message);
  }
}

TEST(RequestLimitsTest, NanIsOutsideEveryRange) {
  EXPECT_FALSE(Check([](EngineRequest& r) { r.sampling.temperature = NAN; }).ok());
  EXPECT_FALSE(Check([](EngineRequest& r) { r.sampling.top_p = NAN; }).ok());
  EXPECT_FALSE(Check([](EngineRequest& r) { r.sampling.presence_penalty = NAN; }).ok());
}

TEST(RequestLimitsTest, BoundsThemselvesAreInsideWhereClosed) {
  EXPECT_TRUE(Check([](EngineRequest&) {}).ok());
  EXPECT_TRUE(Check([](EngineRequest& r) {
                r.n = 8;
                r.prompt_logprobs = 512;
                r.top_logprobs = -1;
                r.sampling.temperature = 0;
                r.sampling.top_k = -1;
                r.sampling.top_p = 1;
                r.sampling.min_p = 1;
                r.sampling.presence_penalty = -2;
                r.sampling.frequency_penalty = 2;
                r.constraint_start_token_id = 511;
              }).ok());
  // max_tokens 0 only scores the prompt: allowed with prompt_logprobs alone.
  EXPECT_TRUE(Check([](EngineRequest& r) { r.stop.max_tokens = 0, r.prompt_logprobs = 0; }).ok());
}

TEST(RequestLimitsTest, TheTableListsEveryLimitOnce) {
  std::vector<std::string> names;
  for (const RequestLimit& limit : EngineRequestLimits()) names.push_back(limit.name);
  EXPECT_EQ(names.size(), 12u);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::unique(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace surge
