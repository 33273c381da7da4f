// Progress of a running benchmark on stderr: a redrawn bar when stderr is a terminal,
// otherwise a plain line every few seconds (CI logs stay readable).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "bench/load_driver.h"

namespace surge::bench {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // `title`: "round 2/6: A c=4"; `num_requests` / `duration_s`: the round's bounds (0: none).
  virtual void BeginRound(const std::string& title, int64_t num_requests, double duration_s) = 0;
  virtual void Update(const ProgressState& state) = 0;
  virtual void EndRound(const ProgressState& state) = 0;
  // A warning or remark worth the user's attention (model discovery, calibration).
  virtual void Note(const std::string& text) = 0;
};

class StderrProgress : public ProgressSink {
 public:
  // `interactive`: draw a bar (stderr is a TTY); else print a line every `line_period_s`.
  explicit StderrProgress(bool interactive, double line_period_s = 5.0, FILE* out = stderr)
      : interactive_(interactive), line_period_s_(line_period_s), out_(out) {}

  void BeginRound(const std::string& title, int64_t num_requests, double duration_s) override;
  void Update(const ProgressState& state) override;
  void EndRound(const ProgressState& state) override;
  void Note(const std::string& text) override;

 private:
  double Fraction(const ProgressState& state) const;
  std::string Counts(const ProgressState& state) const;

  const bool interactive_;
  const double line_period_s_;
  FILE* const out_;
  std::string title_;
  int64_t num_requests_ = 0;
  double duration_s_ = 0;
  double next_line_s_ = 0;
  bool bar_drawn_ = false;
};

}  // namespace surge::bench
