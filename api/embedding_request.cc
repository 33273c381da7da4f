#include "api/embedding_request.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace surge::api {
namespace {

// OpenAI's embeddings take `user`; metadata and store belong to other endpoints.
constexpr std::array<std::string_view, 1> kEmbeddingMetadata = {"user"};

void ReadEncodingFormat(FieldReader& reader, EmbeddingRequest* request) {
  std::string format = "float";
  if (!reader.String("encoding_format", &format)) return;
  reader.Require(format == "float" || format == "base64", "encoding_format",
                 "encoding_format must be \"float\" or \"base64\", got \"" + format + "\"");
  request->base64 = format == "base64";
}

}  // namespace

ApiResult<EmbeddingRequest> ParseEmbeddingRequest(std::string_view body, const RequestLimits& limits) {
  ApiResult<Json> object = ParseRequestObject(body, limits);
  if (!object.ok()) return object.error();
  FieldReader reader(*object);
  EmbeddingRequest request;
  ApiResult<std::vector<CompletionPrompt>> inputs =
      ParsePromptList(reader.Find("input"), {"input", "inputs", limits.max_embedding_inputs});
  if (!inputs.ok()) return inputs.error();
  request.inputs = std::move(inputs).value();
  reader.String("model", &request.model);
  ReadEncodingFormat(reader, &request);
  int64_t dimensions = 0;
  if (reader.IntInRange("dimensions", 1, INT32_MAX, &dimensions)) request.dimensions = dimensions;
  std::string user;
  reader.String("user", &user);  // metadata: type-checked, no effect
  reader.RefuseUnread(kEmbeddingMetadata);
  if (reader.failed()) return reader.error();
  return request;
}

std::optional<ApiError> CheckDimensions(const EmbeddingRequest& request, int64_t embedding_size) {
  if (!request.dimensions || *request.dimensions <= embedding_size) return std::nullopt;
  return InvalidParam("dimensions", "dimensions must be in [1, " + std::to_string(embedding_size) +
                                        "] (the model's embedding size), got " +
                                        std::to_string(*request.dimensions));
}

std::vector<float> TruncateEmbedding(std::span<const float> embedding, int64_t dimensions) {
  std::vector<float> out(embedding.begin(), embedding.begin() + std::min<size_t>(dimensions, embedding.size()));
  double norm_squared = 0;
  for (float value : out) norm_squared += static_cast<double>(value) * value;
  if (norm_squared == 0) return out;
  const double inv_norm = 1.0 / std::sqrt(norm_squared);
  for (float& value : out) value = static_cast<float>(value * inv_norm);
  return out;
}

std::string EmbeddingToBase64(std::span<const float> embedding) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  static_assert(std::endian::native == std::endian::little, "float32 bytes are written as they lie");
  std::string bytes(embedding.size() * sizeof(float), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), embedding.data(), bytes.size());
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t chunk = 0;
    for (size_t j = 0; j < 3; ++j) chunk = chunk << 8 | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0);
    for (size_t j = 0; j < 4; ++j) out += j <= n ? kAlphabet[(chunk >> (18 - 6 * j)) & 63] : '=';
  }
  return out;
}

std::string EmbeddingResponseJson(const std::string& model, const std::vector<std::vector<float>>& embeddings,
                                  bool base64, int64_t num_prompt_tokens) {
  Json data = Json::array();
  for (size_t i = 0; i < embeddings.size(); ++i) {
    Json item = {{"object", "embedding"}, {"index", i}};
    if (base64) {
      item["embedding"] = EmbeddingToBase64(embeddings[i]);
    } else {
      item["embedding"] = embeddings[i];
    }
    data.push_back(std::move(item));
  }
  Json body = {{"object", "list"},
               {"data", std::move(data)},
               {"model", model},
               {"usage", {{"prompt_tokens", num_prompt_tokens}, {"total_tokens", num_prompt_tokens}}}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace surge::api
