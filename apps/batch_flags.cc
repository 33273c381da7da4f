#include "apps/batch_flags.h"

#include <string_view>

#include "apps/byte_size.h"

namespace surge {

void RegisterBatchFlags(FlagParser& parser, BatchFlags& f) {
  parser.AddString("data-dir", &f.data_dir,
                   "turn on the OpenAI Batch API (/v1/files, /v1/batches): its SQLite store and files live in DIR, "
                   "and unfinished batches resume from it after a restart (default: off, those routes answer 404)");
  parser.AddInt("batch-max-in-flight", &f.max_in_flight,
                "most batch requests in flight at once; the window adapts below it to live load (default 64)");
  parser.AddString("batch-max-file-size", &f.max_file_size, "largest file POST /v1/files takes (default 200MiB)");
}

StatusOr<std::optional<batch::BatchServiceOptions>> ToBatchOptions(const BatchFlags& f, const FlagParser& parser,
                                                                   bool in_flight_used_elsewhere) {
  if (f.data_dir.empty()) {
    for (const char* flag : {"batch-max-in-flight", "batch-max-file-size"}) {
      if (in_flight_used_elsewhere && std::string_view(flag) == "batch-max-in-flight") continue;
      if (parser.seen(flag)) return InvalidArgumentError(std::string("--") + flag + " needs --data-dir");
    }
    return std::optional<batch::BatchServiceOptions>();
  }
  if (f.max_in_flight < 1 || f.max_in_flight > 4096) return InvalidArgumentError("--batch-max-in-flight must be in [1, 4096]");
  ASSIGN_OR_RETURN(ByteSize size, ParseByteSize(f.max_file_size, "batch-max-file-size", false));
  if (size.bytes < 1) return InvalidArgumentError("--batch-max-file-size must be > 0");
  return std::optional<batch::BatchServiceOptions>(batch::BatchServiceOptions{
      .data_dir = f.data_dir, .max_file_bytes = size.bytes, .max_in_flight = static_cast<int>(f.max_in_flight)});
}

}  // namespace surge
