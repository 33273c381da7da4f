#include "base/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace surge {
namespace {

LogLevel LevelFromEnv() {
  const char* env = std::getenv("SURGE_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "warning") == 0) return LogLevel::kWarning;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<LogLevel>& MinLevel() {
  static std::atomic<LogLevel> level{LevelFromEnv()};
  return level;
}

const char* LevelLetter(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "D";
    case LogLevel::kInfo: return "I";
    case LogLevel::kWarning: return "W";
    case LogLevel::kError: return "E";
  }
  return "?";
}

}  // namespace

void SetMinLogLevel(LogLevel level) { MinLevel().store(level); }
LogLevel MinLogLevel() { return MinLevel().load(std::memory_order_relaxed); }

namespace internal {

LogLine::LogLine(LogLevel level, const char* file, int line) : level_(level) {
  const char* base = std::strrchr(file, '/');
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
  stream_ << LevelLetter(level) << " " << stamp << " " << (base ? base + 1 : file) << ":" << line
          << "] ";
}

LogLine::~LogLine() {
  stream_ << "\n";
  std::string text = stream_.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
  (void)level_;
}

}  // namespace internal
}  // namespace surge
