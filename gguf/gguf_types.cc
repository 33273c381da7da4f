#include "gguf/gguf_types.h"

namespace surge {

std::string GgufValueTypeName(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8: return "u8";
    case GgufValueType::kI8: return "i8";
    case GgufValueType::kU16: return "u16";
    case GgufValueType::kI16: return "i16";
    case GgufValueType::kU32: return "u32";
    case GgufValueType::kI32: return "i32";
    case GgufValueType::kF32: return "f32";
    case GgufValueType::kBool: return "bool";
    case GgufValueType::kString: return "string";
    case GgufValueType::kArray: return "array";
    case GgufValueType::kU64: return "u64";
    case GgufValueType::kI64: return "i64";
    case GgufValueType::kF64: return "f64";
  }
  return "type#" + std::to_string(static_cast<uint32_t>(type));
}

bool IsKnownGgufValueType(uint32_t raw) { return raw <= 12; }

size_t GgufValueTypeSize(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8: case GgufValueType::kI8: case GgufValueType::kBool: return 1;
    case GgufValueType::kU16: case GgufValueType::kI16: return 2;
    case GgufValueType::kU32: case GgufValueType::kI32: case GgufValueType::kF32: return 4;
    case GgufValueType::kU64: case GgufValueType::kI64: case GgufValueType::kF64: return 8;
    case GgufValueType::kString: case GgufValueType::kArray: return 0;
  }
  return 0;
}

std::optional<GgmlTypeInfo> GetGgmlTypeInfo(uint32_t raw_type) {
  // Block sizes and bytes as ggml's type_traits table defines them.
  switch (static_cast<GgmlType>(raw_type)) {
    case GgmlType::kF32: return GgmlTypeInfo{"F32", 1, 4};
    case GgmlType::kF16: return GgmlTypeInfo{"F16", 1, 2};
    case GgmlType::kQ4_0: return GgmlTypeInfo{"Q4_0", 32, 18};
    case GgmlType::kQ4_1: return GgmlTypeInfo{"Q4_1", 32, 20};
    case GgmlType::kQ5_0: return GgmlTypeInfo{"Q5_0", 32, 22};
    case GgmlType::kQ5_1: return GgmlTypeInfo{"Q5_1", 32, 24};
    case GgmlType::kQ8_0: return GgmlTypeInfo{"Q8_0", 32, 34};
    case GgmlType::kQ8_1: return GgmlTypeInfo{"Q8_1", 32, 36};
    case GgmlType::kQ2_K: return GgmlTypeInfo{"Q2_K", 256, 84};
    case GgmlType::kQ3_K: return GgmlTypeInfo{"Q3_K", 256, 110};
    case GgmlType::kQ4_K: return GgmlTypeInfo{"Q4_K", 256, 144};
    case GgmlType::kQ5_K: return GgmlTypeInfo{"Q5_K", 256, 176};
    case GgmlType::kQ6_K: return GgmlTypeInfo{"Q6_K", 256, 210};
    case GgmlType::kQ8_K: return GgmlTypeInfo{"Q8_K", 256, 292};
    case GgmlType::kIQ2_XXS: return GgmlTypeInfo{"IQ2_XXS", 256, 66};
    case GgmlType::kIQ2_XS: return GgmlTypeInfo{"IQ2_XS", 256, 74};
    case GgmlType::kIQ3_XXS: return GgmlTypeInfo{"IQ3_XXS", 256, 98};
    case GgmlType::kIQ1_S: return GgmlTypeInfo{"IQ1_S", 256, 50};
    case GgmlType::kIQ4_NL: return GgmlTypeInfo{"IQ4_NL", 32, 18};
    case GgmlType::kIQ3_S: return GgmlTypeInfo{"IQ3_S", 256, 110};
    case GgmlType::kIQ2_S: return GgmlTypeInfo{"IQ2_S", 256, 82};
    case GgmlType::kIQ4_XS: return GgmlTypeInfo{"IQ4_XS", 256, 136};
    case GgmlType::kI8: return GgmlTypeInfo{"I8", 1, 1};
    case GgmlType::kI16: return GgmlTypeInfo{"I16", 1, 2};
    case GgmlType::kI32: return GgmlTypeInfo{"I32", 1, 4};
    case GgmlType::kI64: return GgmlTypeInfo{"I64", 1, 8};
    case GgmlType::kF64: return GgmlTypeInfo{"F64", 1, 8};
    case GgmlType::kIQ1_M: return GgmlTypeInfo{"IQ1_M", 256, 56};
    case GgmlType::kBF16: return GgmlTypeInfo{"BF16", 1, 2};
    case GgmlType::kTQ1_0: return GgmlTypeInfo{"TQ1_0", 256, 54};
    case GgmlType::kTQ2_0: return GgmlTypeInfo{"TQ2_0", 256, 66};
    case GgmlType::kMXFP4: return GgmlTypeInfo{"MXFP4", 32, 17};
  }
  return std::nullopt;
}

const char* GgmlTypeName(GgmlType type) {
  std::optional<GgmlTypeInfo> info = GetGgmlTypeInfo(static_cast<uint32_t>(type));
  return info ? info->name : "?";
}

}  // namespace surge
