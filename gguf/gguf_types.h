// GGUF's value types and ggml's tensor types, with the block geometry of each tensor type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace surge {

// Metadata value types, numbered as in the GGUF spec.
enum class GgufValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

// "u32", "string", "array" ...; "type#N" for a number outside the spec.
std::string GgufValueTypeName(GgufValueType type);
bool IsKnownGgufValueType(uint32_t raw);
// Bytes of one element of a fixed-size type; 0 for string and array.
size_t GgufValueTypeSize(GgufValueType type);

// ggml's tensor types (ggml.h's enum ggml_type). Gaps are types ggml removed.
enum class GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,
  kIQ2_XXS = 16, kIQ2_XS = 17, kIQ3_XXS = 18, kIQ1_S = 19, kIQ4_NL = 20, kIQ3_S = 21,
  kIQ2_S = 22, kIQ4_XS = 23, kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28,
  kIQ1_M = 29, kBF16 = 30, kTQ1_0 = 34, kTQ2_0 = 35, kMXFP4 = 39,
};

// A tensor type's storage: rows are whole blocks of `block_elements` values taking
// `block_bytes` bytes each (1 and sizeof(element) for plain types).
struct GgmlTypeInfo {
  const char* name;  // "Q4_K", as ggml spells it
  int64_t block_elements;
  size_t block_bytes;
};

// nullopt for numbers ggml does not define (or no longer does).
std::optional<GgmlTypeInfo> GetGgmlTypeInfo(uint32_t raw_type);
const char* GgmlTypeName(GgmlType type);  // "?" for an unknown value

}  // namespace surge
