// libFuzzer target: safetensors headers (model/safetensors.cc, compiled into this target
// alone so that the kernels stay out). A header that parses must describe tensors that
// lie inside the input, in order, without overlap, each exactly as large as its shape.
#include <cstddef>
#include <cstdint>
#include <span>

#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto header = surge::ParseSafetensorsHeader(std::span<const uint8_t>(data, size), "fuzz.safetensors");
  if (!header.ok()) return 0;
  if (header->data_offset_bytes < 8 || header->data_offset_bytes > size) __builtin_trap();
  const uint64_t data_bytes = size - header->data_offset_bytes;
  uint64_t previous_end = 0;
  for (const surge::SafetensorsEntry& entry : header->tensors) {
    uint64_t elements = 1;
    for (int64_t dim : entry.shape) {
      if (dim < 0) __builtin_trap();
      elements *= static_cast<uint64_t>(dim);
    }
    if (entry.begin_bytes < previous_end || entry.end_bytes < entry.begin_bytes ||
        entry.end_bytes > data_bytes ||
        entry.end_bytes - entry.begin_bytes != elements * surge::TensorDTypeSize(entry.dtype)) {
      __builtin_trap();  // the validation promised in safetensors.h
    }
    previous_end = entry.end_bytes;
  }
  return 0;
}
