// LoadProgress: what `surge serve` shows while a model loads — one line per stage on a pipe
// or file, one redrawn line with a bar and the seconds elapsed on a terminal.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "base/periodic_thread.h"

namespace surge {

class LoadProgress {
 public:
  // `num_stages` Stage() calls are expected; `out` null: silent (tests, in-process use).
  LoadProgress(std::FILE* out, std::string what, int num_stages);
  ~LoadProgress();  // Done() if not yet

  // The next stage starts ("weights", "tokenizer", ...).
  void Stage(const std::string& name);
  void Done();

 private:
  void Draw(bool final_line);  // mu_ held

  std::FILE* out_;
  const bool tty_;
  const std::string what_;
  const int num_stages_;
  int stage_ = 0;
  std::string stage_name_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::atomic<bool> done_{false};
  PeriodicThread ticker_;  // a terminal only: redraws the elapsed time
};

}  // namespace surge
