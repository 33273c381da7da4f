#include "model/weight_store.h"

#include <cstring>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "base/json_depth.h"
#include "model/safetensors.h"

namespace surge {
namespace {

using Json = nlohmann::json;

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// A shard name must stay inside the model directory: no absolute paths, no "..".
Status CheckShardName(const std::string& shard, const std::string& index_path) {
  std::filesystem::path normal = std::filesystem::path(shard).lexically_normal();
  bool escapes = shard.empty() || normal.is_absolute() || normal.has_root_path();
  for (const auto& part : normal) escapes = escapes || part == "..";
  if (escapes) {
    return InvalidArgumentError(index_path + ": shard path '" + shard +
                                "' is outside the model directory");
  }
  return OkStatus();
}

// weight_map: tensor name -> shard file name.
StatusOr<std::map<std::string, std::string>> ReadIndex(const std::string& index_path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(index_path));
  if (!JsonDepthWithin(text)) return DataLossError(index_path + ": JSON nested too deep");
  Json root;
  // nlohmann reports errors by exception; they stop here and become a Status.
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    return DataLossError(index_path + ": not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("weight_map") || !root["weight_map"].is_object()) {
    return DataLossError(index_path + ": missing object 'weight_map'");
  }
  std::map<std::string, std::string> weight_map;
  for (const auto& [name, shard] : root["weight_map"].items()) {
    if (!shard.is_string()) {
      return DataLossError(index_path + ": weight_map entry '" + name + "' is not a string");
    }
    RETURN_IF_ERROR(CheckShardName(shard.get<std::string>(), index_path));
    weight_map[name] = shard.get<std::string>();
  }
  return weight_map;
}

// Widens `count` elements of `dtype` at `src` into `dst`. memcpy per element because the
// mapped bytes need not be aligned.
void ConvertToF32(TensorDType dtype, const uint8_t* src, size_t count, float* dst) {
  switch (dtype) {
    case TensorDType::kF32:
      if (count > 0) std::memcpy(dst, src, count * sizeof(float));
      return;
    case TensorDType::kF16:
    case TensorDType::kBF16:
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, 2);
        dst[i] = dtype == TensorDType::kF16 ? HalfToFloat(bits) : BFloat16ToFloat(bits);
      }
      return;
    case TensorDType::kF8E4M3:
      for (size_t i = 0; i < count; ++i) dst[i] = Fp8E4m3ToFloat(src[i]);
      return;
    case TensorDType::kI64:
      for (size_t i = 0; i < count; ++i) {
        int64_t value;
        std::memcpy(&value, src + 8 * i, 8);
        dst[i] = static_cast<float>(value);
      }
      return;
  }
}

}  // namespace

int64_t TensorView::num_elements() const {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;  // cannot overflow: the header check bounded it
  return count;
}

StatusOr<std::unique_ptr<WeightStore>> WeightStore::Open(const std::string& model_dir) {
  std::unique_ptr<WeightStore> store(new WeightStore());
  store->dir_ = model_dir;
  // "dir/" and "dir" name the same tensors; keep messages free of "dir//file".
  while (store->dir_.size() > 1 && store->dir_.back() == '/') store->dir_.pop_back();
  std::error_code error;  // an unreadable path counts as absent; opening it says why
  // transformers prefers the single file when both exist; so do we.
  if (std::filesystem::exists(store->dir_ + "/" + kSingleFile, error)) {
    RETURN_IF_ERROR(store->AddFile(kSingleFile));
  } else if (std::filesystem::exists(store->dir_ + "/" + kIndexFile, error)) {
    RETURN_IF_ERROR(store->OpenSharded(store->dir_ + "/" + kIndexFile));
  } else {
    return NotFoundError(model_dir + ": no " + kSingleFile + " or " + kIndexFile);
  }
  return store;
}

// Maps one safetensors file and registers its tensors; a name already registered from
// another file is an error, since which copy the model meant is unknowable.
Status WeightStore::AddFile(const std::string& file_name) {
  std::string path = dir_ + "/" + file_name;
  ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, MappedFile::Open(path));
  ASSIGN_OR_RETURN(SafetensorsHeader header, ParseSafetensorsHeader(file->bytes(), path));
  std::span<const uint8_t> data = file->bytes().subspan(header.data_offset_bytes);
  for (SafetensorsEntry& entry : header.tensors) {
    auto it = tensors_.find(entry.name);
    if (it != tensors_.end()) {
      return DataLossError(path + ": tensor '" + entry.name + "' is also in " + it->second.file);
    }
    TensorView view{.name = entry.name,
                    .file = path,
                    .dtype = entry.dtype,
                    .shape = std::move(entry.shape),
                    .bytes = data.subspan(entry.begin_bytes, entry.end_bytes - entry.begin_bytes)};
    tensors_.emplace(entry.name, std::move(view));
  }
  files_.push_back(std::move(file));
  return OkStatus();
}

// Opens each shard once, then checks that every tensor of the index is in the shard the
// index names.
Status WeightStore::OpenSharded(const std::string& index_path) {
  ASSIGN_OR_RETURN(auto weight_map, ReadIndex(index_path));
  std::set<std::string> shards;
  for (const auto& [name, shard] : weight_map) shards.insert(shard);
  for (const std::string& shard : shards) {
    Status status = AddFile(shard);
    if (status.code() == StatusCode::kNotFound) {
      return NotFoundError(index_path + ": shard '" + shard + "' is missing: " + status.message());
    }
    RETURN_IF_ERROR(status);
  }
  for (const auto& [name, shard] : weight_map) {
    auto it = tensors_.find(name);
    if (it == tensors_.end() || it->second.file != dir_ + "/" + shard) {
      return NotFoundError(index_path + ": tensor '" + name + "' is not in its shard '" +
                           shard + "'");
    }
  }
  return OkStatus();
}

StatusOr<TensorView> WeightStore::Get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFoundError(dir_ + ": no tensor '" + name + "'");
  return it->second;
}

std::vector<std::string> WeightStore::Names() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, view] : tensors_) names.push_back(name);
  return names;
}

StatusOr<std::vector<float>> WeightStore::LoadF32(
    const std::string& name, const std::vector<int64_t>& expected_shape) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFoundError(dir_ + ": no tensor '" + name + "'");
  const TensorView& view = it->second;
  if (view.shape != expected_shape) {
    return InvalidArgumentError(view.file + ": tensor '" + name + "' has shape " +
                                ShapeString(view.shape) + ", expected " +
                                ShapeString(expected_shape));
  }
  std::vector<float> out(static_cast<size_t>(view.num_elements()));
  ConvertToF32(view.dtype, view.bytes.data(), out.size(), out.data());
  return out;
}

StatusOr<LinearWeightData> WeightStore::LoadLinearWeight(const std::string& name, int64_t rows,
                                                         int64_t cols) const {
  ASSIGN_OR_RETURN(LinearWeightData data, WeightSource::LoadLinearWeight(name, rows, cols));
  const TensorView& view = tensors_.at(name + ".weight");  // present: the load succeeded
  if (view.dtype != TensorDType::kF8E4M3) return data;
  if (fp8_block_rows_ <= 0 || fp8_block_cols_ <= 0) {
    return InvalidArgumentError(view.file + ": tensor '" + name +
                                ".weight' is F8_E4M3 but config.json has no FP8 "
                                "quantization_config");
  }
  const int64_t block_rows = (rows + fp8_block_rows_ - 1) / fp8_block_rows_;
  const int64_t block_cols = (cols + fp8_block_cols_ - 1) / fp8_block_cols_;
  ASSIGN_OR_RETURN(std::vector<float> scale_inv,
                   LoadF32(name + ".weight_scale_inv", {block_rows, block_cols}));
  for (int64_t r = 0; r < rows; ++r) {
    const float* scales = &scale_inv[(r / fp8_block_rows_) * block_cols];
    float* row = &data.f32[r * cols];
    for (int64_t c = 0; c < cols; ++c) row[c] *= scales[c / fp8_block_cols_];
  }
  return data;
}

}  // namespace surge
