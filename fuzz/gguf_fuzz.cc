// libFuzzer target: GGUF model files (gguf/). GgufFile::Parse validates the whole header
// at open; after it succeeds, every metadata value and tensor info it offers must be
// readable with every typed getter (wrong types fail cleanly) and every tensor's bytes
// must lie inside the input.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "gguf/gguf_file.h"

namespace {

// Reads one value the way model loaders do, recursing into expanded arrays.
size_t Touch(const surge::GgufValue& value) {
  size_t sum = value.str.size() + value.array_bytes.size() + value.TypeName().size();
  for (const surge::GgufValue& item : value.array_items) sum += Touch(item);
  return sum;
}

void ReadEverything(const surge::GgufFile& file, std::span<const uint8_t> input) {
  size_t sum = 0;
  for (const std::string& key : file.keys()) {
    const surge::GgufValue* value = file.Find(key);
    if (value == nullptr) __builtin_trap();  // keys() names only what Find has
    sum += Touch(*value);
    sum += file.GetInt(key).ok() + file.GetUint(key).ok() + file.GetFloat(key).ok();
    sum += file.GetBool(key).ok() + file.GetString(key).ok();
    if (auto strings = file.GetStringArray(key); strings.ok()) sum += strings->size();
    if (auto floats = file.GetFloatArray(key); floats.ok()) sum += floats->size();
    if (auto ints = file.GetIntArray(key); ints.ok()) sum += ints->size();
  }
  const uint8_t* begin = input.data();
  const uint8_t* end = input.data() + input.size();
  for (const surge::GgufTensorInfo& tensor : file.tensors()) {
    if (file.FindTensor(tensor.name) == nullptr) __builtin_trap();
    sum += tensor.ShapeString().size() + static_cast<size_t>(tensor.num_elements());
    if (!tensor.bytes.empty() &&
        (tensor.bytes.data() < begin || tensor.bytes.data() + tensor.bytes.size() > end)) {
      __builtin_trap();  // a tensor's data outside the file
    }
    if (!tensor.bytes.empty()) sum += tensor.bytes.front() + tensor.bytes.back();
  }
  (void)file.GetTensor("missing.weight").ok();
  (void)file.GetString("general.architecture").ok();
  if (sum == 0xdeadbeef) __builtin_trap();  // keeps the reads
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> input(data, size);
  auto file = surge::GgufFile::Parse(input, "fuzz.gguf");
  if (file.ok()) ReadEverything(**file, input);
  return 0;
}
