#include "bench/progress.h"

#include <algorithm>
#include <cmath>

namespace surge::bench {
namespace {

constexpr int kBarWidth = 30;

}  // namespace

void StderrProgress::BeginRound(const std::string& title, int64_t num_requests, double duration_s) {
  title_ = title;
  num_requests_ = num_requests;
  duration_s_ = duration_s;
  next_line_s_ = line_period_s_;
  bar_drawn_ = false;
  if (!interactive_) std::fprintf(out_, "bench: %s: started\n", title_.c_str());
}

double StderrProgress::Fraction(const ProgressState& state) const {
  double by_count = num_requests_ > 0 ? static_cast<double>(state.num_done) / static_cast<double>(num_requests_) : 0;
  double by_time = duration_s_ > 0 ? state.elapsed_s / duration_s_ : 0;
  return std::clamp(std::max(by_count, by_time), 0.0, 1.0);
}

std::string StderrProgress::Counts(const ProgressState& state) const {
  char text[160];
  std::snprintf(text, sizeof(text), "%lld done%s, %lld in flight, %lld errors, %.1f s",
                static_cast<long long>(state.num_done),
                num_requests_ > 0 ? (" of " + std::to_string(num_requests_)).c_str() : "",
                static_cast<long long>(state.num_in_flight), static_cast<long long>(state.num_failed),
                state.elapsed_s);
  return text;
}

void StderrProgress::Update(const ProgressState& state) {
  if (!interactive_) {
    if (state.elapsed_s < next_line_s_) return;
    next_line_s_ = state.elapsed_s + line_period_s_;
    std::fprintf(out_, "bench: %s: %s\n", title_.c_str(), Counts(state).c_str());
    return;
  }
  int filled = static_cast<int>(std::lround(Fraction(state) * kBarWidth));
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kBarWidth, '.');
  // \r and erase-to-end-of-line: the bar redraws in place.
  std::fprintf(out_, "\r%s [%s] %s\x1b[K", title_.c_str(), bar.c_str(), Counts(state).c_str());
  std::fflush(out_);
  bar_drawn_ = true;
}

void StderrProgress::EndRound(const ProgressState& state) {
  if (interactive_ && bar_drawn_) std::fprintf(out_, "\r\x1b[K");
  std::fprintf(out_, "bench: %s: %s\n", title_.c_str(), Counts(state).c_str());
  std::fflush(out_);
}

void StderrProgress::Note(const std::string& text) {
  std::fprintf(out_, "bench: %s\n", text.c_str());
  std::fflush(out_);
}

}  // namespace surge::bench
