// LOG(level) << ...: one line to stderr with a level and a timestamp.
#pragma once

#include <sstream>

namespace surge {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Lines below this level are dropped. Default kInfo; SURGE_LOG_LEVEL=debug|info|warning|error.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();

namespace internal {
class LogLine {
 public:
  LogLine(LogLevel level, const char* file, int line);
  ~LogLine();
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace internal

}  // namespace surge

#define SURGE_LOG_LEVEL_DEBUG ::surge::LogLevel::kDebug
#define SURGE_LOG_LEVEL_INFO ::surge::LogLevel::kInfo
#define SURGE_LOG_LEVEL_WARNING ::surge::LogLevel::kWarning
#define SURGE_LOG_LEVEL_ERROR ::surge::LogLevel::kError

#define LOG(level)                                                  \
  if (SURGE_LOG_LEVEL_##level < ::surge::MinLogLevel()) {           \
  } else                                                            \
    ::surge::internal::LogLine(SURGE_LOG_LEVEL_##level, __FILE__, __LINE__).stream()
