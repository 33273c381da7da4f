#include "apps/load_progress.h"

#include <unistd.h>

namespace surge {

LoadProgress::LoadProgress(std::FILE* out, std::string what, int num_stages)
    : out_(out), tty_(out != nullptr && isatty(fileno(out)) != 0), what_(std::move(what)), num_stages_(num_stages) {
  constexpr auto kRedraw = std::chrono::milliseconds(200);
  if (!tty_) return;
  ticker_.Start(
      kRedraw,
      [this] {
        std::lock_guard<std::mutex> lock(mu_);
        if (stage_ > 0) Draw(false);
      },
      kRedraw);
}

LoadProgress::~LoadProgress() { Done(); }

void LoadProgress::Stage(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stage_;
  stage_name_ = name;
  Draw(false);
}

void LoadProgress::Done() {
  if (done_.exchange(true)) return;
  ticker_.Stop();
  std::lock_guard<std::mutex> lock(mu_);
  stage_ = num_stages_;
  stage_name_ = "done";
  Draw(true);
}

void LoadProgress::Draw(bool final_line) {
  if (out_ == nullptr) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int done_stages = final_line ? num_stages_ : stage_ - 1;
  if (!tty_) {
    std::fprintf(out_, "surge serve: loading %s: %s (%d/%d, %.1f s)\n", what_.c_str(), stage_name_.c_str(),
                 final_line ? num_stages_ : stage_, num_stages_, seconds);
  } else {
    constexpr int kWidth = 24;
    const int filled = num_stages_ > 0 ? kWidth * done_stages / num_stages_ : kWidth;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(out_, "\r\033[Ksurge serve: loading %s [%s] %s %.1f s%s", what_.c_str(), bar.c_str(),
                 stage_name_.c_str(), seconds, final_line ? "\n" : "");
  }
  std::fflush(out_);
}

}  // namespace surge
