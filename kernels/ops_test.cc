#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/reference/reference.h"
#include "kernels/simd.h"
#include "kernels/vec_ops.h"

namespace surge {
namespace {

std::vector<float> RandomVector(std::mt19937& rng, int64_t n, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

const int64_t kLengths[] = {1, 2, 7, 8, 15, 16, 17, 31, 64, 100, 768, 1001};

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double rel,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + 1e-7) << what << " at " << i;
  }
}

TEST(OpsTest, RmsNormMatchesReference) {
  std::mt19937 rng(3);
  for (SimdLevel level : SupportedSimdLevels()) {
    ScopedSimdLevel scoped(level);
    for (int64_t dim : kLengths) {
      const int64_t rows = 3;
      std::vector<float> x = RandomVector(rng, rows * dim, 3.0f), w = RandomVector(rng, dim);
      std::vector<float> y(rows * dim), want(rows * dim);
      RmsNorm(x.data(), w.data(), rows, dim, 1e-5f, y.data());
      reference::RmsNorm(x.data(), w.data(), rows, dim, 1e-5f, want.data());
      ExpectClose(y, want, 2e-6, std::string(SimdLevelName(level)) + " dim " + std::to_string(dim));
      RmsNorm(x.data(), w.data(), rows, dim, 1e-5f, x.data());  // in place
      ExpectClose(x, y, 0.0, "in place");
    }
  }
}

TEST(OpsTest, SiluMulMatchesReference) {
  std::mt19937 rng(4);
  for (SimdLevel level : SupportedSimdLevels()) {
    ScopedSimdLevel scoped(level);
    for (int64_t n : kLengths) {
      std::vector<float> gate = RandomVector(rng, n, 6.0f), up = RandomVector(rng, n);
      if (n > 2) gate[0] = -120.0f, gate[1] = 120.0f;  // past the exp clamp on both sides
      std::vector<float> y(n), want(n);
      SiluMul(gate.data(), up.data(), n, y.data());
      reference::SiluMul(gate.data(), up.data(), n, want.data());
      ExpectClose(y, want, 4e-7, std::string(SimdLevelName(level)) + " n " + std::to_string(n));
    }
  }
}

TEST(OpsTest, SoftmaxMatchesReference) {
  std::mt19937 rng(5);
  for (SimdLevel level : SupportedSimdLevels()) {
    ScopedSimdLevel scoped(level);
    for (int64_t n : kLengths) {
      std::vector<float> x = RandomVector(rng, n, 10.0f);
      std::vector<float> want = x;
      Softmax(x.data(), n);
      reference::Softmax(want.data(), n);
      ExpectClose(x, want, 2e-6, std::string(SimdLevelName(level)) + " n " + std::to_string(n));
    }
  }
}

TEST(OpsTest, ExpIsAccurateOverItsRange) {
  for (SimdLevel level : SupportedSimdLevels()) {
    const VecOps& ops = VecOpsFor(level);
    std::vector<float> x, y(2001);
    for (int i = 0; i <= 2000; ++i)
      x.push_back(-86.0f + i * (166.0f / 2000));  // up to 80: the sum stays finite
    float sum = ops.exp_shifted(x.data(), 0.0f, y.data(), static_cast<int64_t>(x.size()));
    double want_sum = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      double want = std::exp(double(x[i]));
      want_sum += want;
      ASSERT_NEAR(y[i], want, 3e-7 * want) << SimdLevelName(level) << " exp(" << x[i] << ")";
    }
    EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum);
  }
}

TEST(OpsTest, VecOpsMatchScalarTable) {
  std::mt19937 rng(6);
  const VecOps& scalar = ScalarVecOps();
  for (SimdLevel level : SupportedSimdLevels()) {
    const VecOps& ops = VecOpsFor(level);
    for (int64_t n : kLengths) {
      std::vector<float> a = RandomVector(rng, n), b = RandomVector(rng, n);
      double magnitude = 0.0;
      for (int64_t i = 0; i < n; ++i) magnitude += std::fabs(a[i] * b[i]);
      EXPECT_NEAR(ops.dot(a.data(), b.data(), n), scalar.dot(a.data(), b.data(), n),
                  1e-6 * magnitude);
      EXPECT_EQ(ops.max(a.data(), n), scalar.max(a.data(), n));
      std::vector<float> y1 = b, y2 = b;
      ops.axpy(0.75f, a.data(), y1.data(), n);
      scalar.axpy(0.75f, a.data(), y2.data(), n);
      ExpectClose(y1, y2, 1e-6, "axpy");
      ops.add(a.data(), y1.data(), n);
      scalar.add(a.data(), y2.data(), n);
      ops.scale(-1.5f, y1.data(), n);
      scalar.scale(-1.5f, y2.data(), n);
      ExpectClose(y1, y2, 1e-6, "add+scale");
    }
  }
}

TEST(OpsTest, ArgmaxTakesTheFirstOfTies) {
  std::vector<float> x = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  EXPECT_EQ(Argmax(x.data(), 5), 1);
  EXPECT_EQ(reference::Argmax(x.data(), 5), 1);
  x[0] = NAN;
  EXPECT_EQ(Argmax(x.data(), 5), 1);
  EXPECT_EQ(Argmax(x.data(), 1), 0);
  std::mt19937 rng(7);
  for (int64_t n : kLengths) {
    std::vector<float> v = RandomVector(rng, n);
    EXPECT_EQ(Argmax(v.data(), n), reference::Argmax(v.data(), n));
  }
}

TEST(OpsTest, AddInPlace) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y(9, 1.0f);
  for (SimdLevel level : SupportedSimdLevels()) {
    ScopedSimdLevel scoped(level);
    std::vector<float> z = y;
    AddInPlace(x.data(), z.data(), 9);
    for (int i = 0; i < 9; ++i) EXPECT_EQ(z[i], x[i] + 1.0f);
  }
}

}  // namespace
}  // namespace surge
