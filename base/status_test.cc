#include "base/status.h"

#include <gtest/gtest.h>

namespace surge {
namespace {

StatusOr<int> ParsePositive(int value) {
  if (value <= 0) return InvalidArgumentError("value must be positive, got " + std::to_string(value));
  return value;
}

Status AddOne(int value, int* out) {
  ASSIGN_OR_RETURN(int parsed, ParsePositive(value));
  *out = parsed + 1;
  return OkStatus();
}

TEST(StatusTest, OkAndErrorToString) {
  EXPECT_TRUE(OkStatus().ok());
  EXPECT_EQ(OkStatus().ToString(), "OK");
  Status error = NotFoundError("tensor 'x' missing");
  EXPECT_FALSE(error.ok());
  EXPECT_EQ(error.ToString(), "NOT_FOUND: tensor 'x' missing");
  EXPECT_EQ(error.WithContext("model.safetensors").message(), "model.safetensors: tensor 'x' missing");
}

TEST(StatusTest, AssignOrReturnPropagatesErrors) {
  int out = 0;
  EXPECT_TRUE(AddOne(41, &out).ok());
  EXPECT_EQ(out, 42);
  Status status = AddOne(-3, &out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "value must be positive, got -3");
}

TEST(StatusDeathTest, ValueOfErrorAborts) {
  StatusOr<int> error = ParsePositive(0);
  EXPECT_DEATH((void)error.value(), "StatusOr has no value");
}

}  // namespace
}  // namespace surge
