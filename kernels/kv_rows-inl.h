// KvRowOps::dot_rows / axpy_rows from a level's one-row dot / axpy: the same function
// per row, in row order, with nothing else between the rows' arithmetic, so the results
// are bit for bit those of calling dot / axpy row by row (kv_codec_test checks). Being
// templates on the row function, the row op inlines into the loop: no indirect call per
// row, and the rows' independent dot products overlap in the pipeline.
// Included inside each kv_codec_<level>.cc's target region (the loop must be compiled
// for the row function's instruction set for it to inline).
#pragma once

#include <cstdint>

#include "kernels/kv_codec.h"

namespace surge {
namespace {

template <float (*kDot)(const float*, const uint8_t*, int32_t)>
void DotRows(const float* q, const uint8_t* rows, int64_t row_stride, int32_t num_rows,
             int32_t n, float scale, float* scores) {
  for (int32_t t = 0; t < num_rows; ++t) scores[t] = kDot(q, rows + t * row_stride, n) * scale;
}

template <void (*kAxpy)(float, const uint8_t*, float*, int32_t)>
void AxpyRows(const float* a, const uint8_t* rows, int64_t row_stride, int32_t num_rows,
              float* y, int32_t n) {
  for (int32_t t = 0; t < num_rows; ++t) kAxpy(a[t], rows + t * row_stride, y, n);
}

// A KvRowOps whose batched ops are the row ops applied row by row.
template <float (*kDot)(const float*, const uint8_t*, int32_t),
          void (*kAxpy)(float, const uint8_t*, float*, int32_t)>
constexpr KvRowOps RowByRowOps(void (*quantize)(const float*, int32_t, uint8_t*)) {
  return {quantize, kDot, kAxpy, DotRows<kDot>, AxpyRows<kAxpy>};
}

}  // namespace
}  // namespace surge
