#include "batch/batch_types.h"

#include <array>
#include <utility>

namespace surge::batch {
namespace {

constexpr std::array<std::pair<BatchStatus, std::string_view>, 8> kNames = {{
    {BatchStatus::kValidating, "validating"},
    {BatchStatus::kFailed, "failed"},
    {BatchStatus::kInProgress, "in_progress"},
    {BatchStatus::kFinalizing, "finalizing"},
    {BatchStatus::kCompleted, "completed"},
    {BatchStatus::kExpired, "expired"},
    {BatchStatus::kCancelling, "cancelling"},
    {BatchStatus::kCancelled, "cancelled"},
}};

}  // namespace

std::string_view BatchStatusName(BatchStatus status) {
  for (const auto& [value, name] : kNames) {
    if (value == status) return name;
  }
  return "unknown";
}

StatusOr<BatchStatus> ParseBatchStatus(std::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return InvalidArgumentError("unknown batch status '" + std::string(name) + "'");
}

bool IsTerminal(BatchStatus status) {
  return status == BatchStatus::kFailed || status == BatchStatus::kCompleted || status == BatchStatus::kExpired ||
         status == BatchStatus::kCancelled;
}

}  // namespace surge::batch
