// Every panel-layout MatMul kernel (each dtype, each SIMD level this CPU runs, each
// alternative) against the double reference, against the scalar kernel's bits where it
// promises them, for batch invariance, and against the f32 product within the codecs'
// error bounds.
#include "kernels/packed_matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/packed_weight.h"
#include "kernels/reference/reference.h"
#include "kernels/weight_codec.h"

namespace surge {
namespace {

using internal::PackedKernel;

std::vector<float> RandomVector(std::mt19937& rng, int64_t n, float stddev = 1.0f) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

const WeightFormat kFormats[] = {{WeightDType::kF32},           {WeightDType::kBF16},
                                 {WeightDType::kInt8},          {WeightDType::kInt4, 32},
                                 {WeightDType::kInt4, 64},      {WeightDType::kInt4, 128},
                                 {WeightDType::kInt8Groups, 32}, {WeightDType::kInt8Groups, 64},
                                 {WeightDType::kInt8Groups, 128}};

std::string Describe(const PackedKernel& kernel, SimdLevel level, const WeightFormat& f, int64_t m,
                     int64_t n, int64_t k) {
  return std::string(kernel.name) + " at level " + SimdLevelName(level) + " group " +
         std::to_string(f.group_size) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
         " k=" + std::to_string(k);
}

bool QuantizesActivations(const PackedKernel& kernel) {
  return kernel.activations == internal::ActivationFormat::kU8Offset ||
         kernel.activations == internal::ActivationFormat::kS8 ||
         kernel.activations == internal::ActivationFormat::kS8Groups;
}

// The bound on |kernel - reference| for one output, from A = sum_k |x_k| |w_k|:
// - f32 chains (f32, bf16 widened, int4 dequantized): the fma chain's gamma_K bound;
// - vdpbf16ps: x rounded to bf16 (2^-8 A covers both roundings' products) plus that;
// - quantized x: exact integer sums; only the f32 epilogue rounds, at most 4 times per
//   group (int4: scale * x's group scale, two fmas, and that scale times the q sum) and
//   a few times at the end, on partial sums bounded by A with |w| replaced by
//   |w| + 2 max|w| (the int4 min terms can exceed the weights they offset).
double Tolerance(const PackedKernel& kernel, const float* x, const float* w, int64_t k, float max_w,
                 float bias) {
  double a = std::fabs(bias), a_wide = std::fabs(bias);
  for (int64_t j = 0; j < k; ++j) {
    a += std::fabs(x[j] * w[j]);
    a_wide += std::fabs(x[j]) * (std::fabs(w[j]) + 2 * max_w);
  }
  const double chain = (k + 2) * 0x1p-24 * a + 1e-30;
  if (QuantizesActivations(kernel)) return (4.0 * (k / 32 + 1) + 6) * 0x1p-24 * a_wide + 1e-30;
  if (kernel.activations == internal::ActivationFormat::kBf16) return 0x1p-8 * a + chain;
  return chain;
}

struct Problem {
  std::vector<float> x, w, bias;
  int64_t m, n, k;
};

void CheckKernel(const PackedKernel& kernel, SimdLevel level, const WeightFormat& format,
                 const Problem& pr, ThreadPool* pool) {
  const PackedWeight packed = PackedWeight::Pack(pr.w.data(), pr.n, pr.k, format);
  const std::vector<float> values = packed.Unpack();
  float max_w = 0.0f;
  for (float v : values) max_w = std::max(max_w, std::fabs(v));
  std::vector<float> y(pr.m * pr.n, NAN), want(pr.m * pr.n), scalar(pr.m * pr.n);
  internal::PackedMatMul(kernel, pr.x.data(), pr.m, packed.matrix(), pr.bias.data(), y.data(),
                         pool);
  const WeightMatrix dense = F32Weight(values.data(), pr.n, pr.k);
  if (QuantizesActivations(kernel)) {
    const bool groups = kernel.activations == internal::ActivationFormat::kS8Groups;
    reference::MatMulQuantizedActivations(pr.x.data(), pr.m, dense, pr.bias.data(), want.data(),
                                          groups ? format.group_size : 0);
  } else {
    reference::MatMul(pr.x.data(), pr.m, dense, pr.bias.data(), want.data());
  }
  internal::PackedMatMul(internal::ScalarKernel(format.dtype), pr.x.data(), pr.m, packed.matrix(),
                         pr.bias.data(), scalar.data(), nullptr);
  const std::string what = Describe(kernel, level, format, pr.m, pr.n, pr.k);
  for (int64_t i = 0; i < pr.m; ++i) {
    for (int64_t j = 0; j < pr.n; ++j) {
      const int64_t at = i * pr.n + j;
      const double tolerance =
          Tolerance(kernel, &pr.x[i * pr.k], &values[j * pr.k], pr.k, max_w, pr.bias[j]);
      ASSERT_NEAR(y[at], want[at], tolerance) << what << " at (" << i << ", " << j << ")";
      if (kernel.same_bits_as_scalar) {
        ASSERT_EQ(y[at], scalar[at]) << what << " vs scalar";
      }
    }
  }
}

TEST(PackedMatMulTest, EveryKernelMatchesReference) {
  std::mt19937 rng(1);
  ThreadPool pool(3);
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1},    {17, 33}, {5, 100},
                                                {70, 129}, {33, 64}, {48, 7}};
  for (const WeightFormat& format : kFormats) {
    for (auto [n, k] : shapes) {
      for (int64_t m : {1, 3, 8, 130}) {
        Problem pr{RandomVector(rng, m * k),
                   RandomVector(rng, n * k, 0.1f),
                   RandomVector(rng, n),
                   m,
                   n,
                   k};
        for (SimdLevel level : SupportedSimdLevels()) {
          for (const PackedKernel& kernel : internal::PackedKernels(format.dtype, level)) {
            CheckKernel(kernel, level, format, pr, nullptr);
            CheckKernel(kernel, level, format, pr, &pool);
          }
        }
      }
    }
  }
}

// A row's output is bit-identical whether computed alone or in a batch of any size,
// threaded or not: MatMul's batch-invariance contract, for every kernel.
TEST(PackedMatMulTest, RowsDoNotDependOnTheBatch) {
  std::mt19937 rng(2);
  ThreadPool pool(4);
  const int64_t n = 77, k = 203;
  const std::vector<float> w = RandomVector(rng, n * k, 0.1f), bias = RandomVector(rng, n);
  for (const WeightFormat& format : kFormats) {
    const PackedWeight packed = PackedWeight::Pack(w.data(), n, k, format);
    for (SimdLevel level : SupportedSimdLevels()) {
      for (const PackedKernel& kernel : internal::PackedKernels(format.dtype, level)) {
        for (int64_t m : {2, 3, 5, 9, 37, 100, 130}) {
          std::vector<float> x = RandomVector(rng, m * k), batch(m * n), single(n);
          internal::PackedMatMul(kernel, x.data(), m, packed.matrix(), bias.data(), batch.data(),
                                 &pool);
          for (int64_t i = 0; i < m; ++i) {
            internal::PackedMatMul(kernel, &x[i * k], 1, packed.matrix(), bias.data(),
                                   single.data(), nullptr);
            ASSERT_EQ(0, std::memcmp(single.data(), &batch[i * n], n * sizeof(float)))
                << Describe(kernel, level, format, m, n, k) << " row " << i;
          }
        }
      }
    }
  }
}

// Against the exact f32 product: |y - x W^T| <= sum |x| |w - w_q| (the weight codec's
// error, asserted per element in weight_codec_test) + the activation codec's
// scale (1/2 + 2^-15) sum |w_q| (int8/int4 only) + the kernel's rounding.
TEST(PackedMatMulTest, QuantizedProductsStayWithinCodecBounds) {
  std::mt19937 rng(3);
  const int64_t m = 5, n = 40, k = 300;
  const std::vector<float> x = RandomVector(rng, m * k), w = RandomVector(rng, n * k, 0.05f);
  for (const WeightFormat& format : kFormats) {
    const PackedWeight packed = PackedWeight::Pack(w.data(), n, k, format);
    const std::vector<float> wq = packed.Unpack();
    for (SimdLevel level : SupportedSimdLevels()) {
      for (const PackedKernel& kernel : internal::PackedKernels(format.dtype, level)) {
        std::vector<float> y(m * n);
        internal::PackedMatMul(kernel, x.data(), m, packed.matrix(), nullptr, y.data(), nullptr);
        for (int64_t i = 0; i < m; ++i) {
          float amax = 0.0f;
          for (int64_t j = 0; j < k; ++j) amax = std::max(amax, std::fabs(x[i * k + j]));
          const double x_step = QuantizesActivations(kernel) ? amax / 127.0 * (0.5 + 0x1p-15) : 0.0;
          for (int64_t c = 0; c < n; ++c) {
            double exact = 0.0, bound = 0.0, a = 0.0;
            for (int64_t j = 0; j < k; ++j) {
              const double xv = x[i * k + j], wv = w[c * k + j], wqv = wq[c * k + j];
              exact += xv * wv;
              bound += std::fabs(xv) * std::fabs(wv - wqv) + x_step * std::fabs(wqv);
              a += std::fabs(xv * wqv);
            }
            if (kernel.activations == internal::ActivationFormat::kBf16) bound += 0x1p-8 * a;
            bound += 1e-5 * a;  // the kernel's own rounding, far below the codec terms
            ASSERT_NEAR(y[i * n + c], exact, bound) << kernel.name << " at " << i << ", " << c;
          }
        }
      }
    }
  }
}

// The AMX kernels' layouts, K/M/N edges, epilogues and per-thread tile configs, through
// the C++ model of the tile instructions (amx_tiles-inl.h), on any CPU with AVX512_BF16
// (their epilogues and K tails): int8/int4 the scalar kernel's bits, bf16 within bounds;
// M, N and K ragged around the 16-row, 16-column and 64-byte tile edges.
const WeightFormat kAmxFormats[] = {{WeightDType::kBF16},     {WeightDType::kInt8},
                                    {WeightDType::kInt4, 32}, {WeightDType::kInt4, 64},
                                    {WeightDType::kInt4, 128}};

bool CanRunEmulatedAmx() { return DetectedSimdLevel() >= SimdLevel::kAvx512Bf16; }
bool CanRunAmx() { return DetectedSimdLevel() >= SimdLevel::kAmx; }

void CheckAmxKernels(bool hardware, std::mt19937& rng, ThreadPool* pool) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1},   {17, 33},  {33, 64}, {70, 129},
                                                {16, 200}, {48, 256}, {5, 100}, {31, 320}};
  for (const WeightFormat& format : kAmxFormats) {
    const PackedKernel kernel = hardware ? internal::AmxKernel(format.dtype)
                                         : internal::AmxEmulatedKernel(format.dtype);
    for (auto [n, k] : shapes) {
      for (int64_t m : {1, 15, 16, 17, 33, 100, 130}) {
        Problem pr{RandomVector(rng, m * k), RandomVector(rng, n * k, 0.1f), RandomVector(rng, n),
                   m, n, k};
        CheckKernel(kernel, DetectedSimdLevel(), format, pr, nullptr);
        CheckKernel(kernel, DetectedSimdLevel(), format, pr, pool);
      }
    }
  }
}

TEST(PackedMatMulAmxTest, EmulatedKernelsMatchScalarAndReference) {
  if (!CanRunEmulatedAmx()) GTEST_SKIP() << "the emulated AMX kernels' epilogues need AVX512_BF16";
  std::mt19937 rng(5);
  ThreadPool pool(3);
  CheckAmxKernels(/*hardware=*/false, rng, &pool);
}

TEST(PackedMatMulAmxTest, HardwareKernelsMatchScalarAndReference) {
  if (!CanRunAmx()) {
    GTEST_SKIP() << "no usable AMX here (CPUID AMX-TILE/INT8/BF16, XCR0 tile state and "
                    "arch_prctl(ARCH_REQ_XCOMP_PERM) all needed); the emulated kernels ran";
  }
  std::mt19937 rng(5);
  ThreadPool pool(4);  // every worker runs tiles, so every worker loads a tile config
  CheckAmxKernels(/*hardware=*/true, rng, &pool);
}

// The hardware and the model agree bit for bit on the integer kernels; on bf16, where
// the model's rounding is the SDM's and need not be the chip's, both meet the bounds.
TEST(PackedMatMulAmxTest, HardwareIntegerKernelsEqualTheModel) {
  if (!CanRunAmx()) GTEST_SKIP() << "no usable AMX here";
  std::mt19937 rng(6);
  ThreadPool pool(4);
  const int64_t m = 77, n = 90, k = 333;
  const std::vector<float> x = RandomVector(rng, m * k), w = RandomVector(rng, n * k, 0.1f);
  for (const WeightFormat& format : kAmxFormats) {
    if (format.dtype == WeightDType::kBF16) continue;
    const PackedWeight packed = PackedWeight::Pack(w.data(), n, k, format);
    std::vector<float> hardware(m * n), model(m * n);
    internal::PackedMatMul(internal::AmxKernel(format.dtype), x.data(), m, packed.matrix(),
                           nullptr, hardware.data(), &pool);
    internal::PackedMatMul(internal::AmxEmulatedKernel(format.dtype), x.data(), m,
                           packed.matrix(), nullptr, model.data(), nullptr);
    ASSERT_EQ(0, std::memcmp(hardware.data(), model.data(), m * n * sizeof(float)))
        << WeightDTypeName(format.dtype) << " group " << format.group_size;
  }
}

// Batch invariance of each AMX kernel on its own (bf16 needs it: MatMul runs it at every
// m), and, for int8/int4, across MatMul's switch at kAmxMinRows: a row alone on VNNI
// equals the same row inside a batch on AMX.
void CheckAmxBatchInvariance(bool hardware) {
  std::mt19937 rng(7);
  ThreadPool pool(4);
  const int64_t n = 77, k = 203;
  const std::vector<float> w = RandomVector(rng, n * k, 0.1f), bias = RandomVector(rng, n);
  for (const WeightFormat& format : kAmxFormats) {
    const PackedWeight packed = PackedWeight::Pack(w.data(), n, k, format);
    const PackedKernel amx = hardware ? internal::AmxKernel(format.dtype)
                                      : internal::AmxEmulatedKernel(format.dtype);
    const bool integer = format.dtype != WeightDType::kBF16;
    const PackedKernel single_kernel =
        integer ? internal::Avx512VnniKernel(format.dtype) : amx;
    for (int64_t m : {2, 15, 16, 17, 37, 100, 130}) {
      std::vector<float> x = RandomVector(rng, m * k), batch(m * n), single(n);
      internal::PackedMatMul(amx, x.data(), m, packed.matrix(), bias.data(), batch.data(), &pool);
      for (int64_t i = 0; i < m; ++i) {
        internal::PackedMatMul(single_kernel, &x[i * k], 1, packed.matrix(), bias.data(),
                               single.data(), nullptr);
        ASSERT_EQ(0, std::memcmp(single.data(), &batch[i * n], n * sizeof(float)))
            << amx.name << " vs " << single_kernel.name << " m=" << m << " row " << i;
      }
    }
  }
}

TEST(PackedMatMulAmxTest, EmulatedRowsDoNotDependOnTheBatch) {
  if (!CanRunEmulatedAmx()) GTEST_SKIP() << "the emulated AMX kernels' epilogues need AVX512_BF16";
  CheckAmxBatchInvariance(/*hardware=*/false);
}

TEST(PackedMatMulAmxTest, HardwareRowsDoNotDependOnTheBatch) {
  if (!CanRunAmx()) GTEST_SKIP() << "no usable AMX here";
  CheckAmxBatchInvariance(/*hardware=*/true);
}

// MatMul's choice on the AMX level (a pure function: runs on any CPU).
TEST(PackedMatMulAmxTest, MatMulTakesAmxForIntegerWeightsFromSixteenRows) {
  const SimdLevel amx = SimdLevel::kAmx;
  for (WeightDType dtype : {WeightDType::kInt8, WeightDType::kInt4}) {
    EXPECT_EQ(internal::PackedKernelFor(dtype, amx, internal::kAmxMinRows - 1).tile,
              internal::Avx512VnniKernel(dtype).tile);
    EXPECT_EQ(internal::PackedKernelFor(dtype, amx, internal::kAmxMinRows).tile,
              internal::AmxKernel(dtype).tile);
    EXPECT_EQ(internal::PackedKernelFor(dtype, SimdLevel::kAvx512Bf16, 512).tile,
              internal::Avx512VnniKernel(dtype).tile);
  }
  const bool bf16_on = internal::AmxBf16Enabled();
  for (int64_t m : {1, 512}) {
    EXPECT_EQ(internal::PackedKernelFor(WeightDType::kBF16, amx, m).tile == internal::AmxKernel(WeightDType::kBF16).tile, bf16_on);
  }
  EXPECT_EQ(internal::PackedKernelFor(WeightDType::kF32, amx, 512).tile,
            internal::Avx512Kernel(WeightDType::kF32).tile);
}

TEST(PackedMatMulTest, MatMulDispatchesPackedWeights) {
  std::mt19937 rng(4);
  const int64_t m = 4, n = 20, k = 50;
  const std::vector<float> x = RandomVector(rng, m * k), w = RandomVector(rng, n * k);
  const PackedWeight packed = PackedWeight::Pack(w.data(), n, k, {WeightDType::kF32});
  std::vector<float> packed_y(m * n), dense_y(m * n);
  MatMul(x.data(), m, packed.matrix(), nullptr, packed_y.data(), nullptr);
  reference::MatMul(x.data(), m, F32Weight(w.data(), n, k), nullptr, dense_y.data());
  for (int64_t i = 0; i < m * n; ++i) EXPECT_NEAR(packed_y[i], dense_y[i], 1e-4);
}

}  // namespace
}  // namespace surge
