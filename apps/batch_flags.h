// The Batch API's flags (--data-dir, --batch-max-in-flight, --batch-max-file-size), shared by
// `surge serve` and `surge route`, which both mount the Batch API when given a data dir.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/flags.h"
#include "base/status.h"
#include "batch/batch_service.h"

namespace surge {

struct BatchFlags {
  std::string data_dir;
  int64_t max_in_flight = 64;
  std::string max_file_size = "200MiB";
};

void RegisterBatchFlags(FlagParser& parser, BatchFlags& flags);

// nullopt without --data-dir (the other batch flags then need it); errors name the flag.
// `in_flight_used_elsewhere`: --batch-max-in-flight also bounds another batch source (surge
// route --queue), so it is taken without --data-dir.
StatusOr<std::optional<batch::BatchServiceOptions>> ToBatchOptions(const BatchFlags& flags, const FlagParser& parser,
                                                                   bool in_flight_used_elsewhere = false);

}  // namespace surge
