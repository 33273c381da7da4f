// loadgen_scripted_server: the ScriptedServer as a process, for the CLI tests of `surge
// bench` (and for measuring bench's own overhead against a zero-delay server). Prints
// "listening on http://127.0.0.1:PORT" and serves until SIGTERM/SIGINT or stdin closes.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/flags.h"
#include "bench/testing/scripted_server.h"

namespace {

using surge::bench::testing::Fault;

// Returns once SIGTERM/SIGINT arrives or stdin reaches end of file (the parent went away).
void WaitForEnd(const sigset_t& signals) {
  while (true) {
    timespec tick{0, 200'000'000};
    if (sigtimedwait(&signals, nullptr, &tick) > 0) return;
    pollfd input{STDIN_FILENO, POLLIN, 0};
    char byte;
    if (poll(&input, 1, 0) > 0 && read(STDIN_FILENO, &byte, 1) <= 0) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t port = 0, ttft_ms = 0, itl_ms = 0, num_tokens = 0;
  double tokens_per_word = 2.0;
  std::string faults = "none";
  bool no_tokenize = false;
  surge::FlagParser parser("loadgen_scripted_server");
  parser.AddInt("port", &port, "port (0: any free one)");
  parser.AddInt("ttft-ms", &ttft_ms, "delay before the first token");
  parser.AddInt("itl-ms", &itl_ms, "delay between tokens");
  parser.AddInt("num-tokens", &num_tokens, "tokens per answer (0: the request's max_tokens)");
  parser.AddDouble("tokens-per-word", &tokens_per_word, "what /tokenize counts per word");
  parser.AddString("faults", &faults, "comma-separated cycle: none,http500,malformed,close,nodone,stall");
  parser.AddBool("no-tokenize", &no_tokenize, "serve no /tokenize");
  if (surge::Status status = parser.Parse(std::vector<std::string>(argv + 1, argv + argc)); !status.ok()) {
    std::fprintf(stderr, "loadgen_scripted_server: %s\n", status.message().c_str());
    return 2;
  }
  surge::bench::testing::StreamScript script{ttft_ms, itl_ms, num_tokens, tokens_per_word, !no_tokenize, {}};
  for (size_t start = 0; start <= faults.size();) {
    size_t comma = std::min(faults.find(',', start), faults.size());
    surge::StatusOr<Fault> fault = surge::bench::testing::ParseFault(faults.substr(start, comma - start));
    if (!fault.ok()) return std::fprintf(stderr, "loadgen_scripted_server: %s\n", fault.status().message().c_str()), 2;
    script.faults.push_back(*fault);
    start = comma + 1;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts: all inherit it
  surge::bench::testing::ScriptedServer server(script);
  if (surge::Status status = server.Start(static_cast<uint16_t>(port)); !status.ok()) {
    std::fprintf(stderr, "loadgen_scripted_server: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("listening on %s\n", server.url().c_str());
  std::fflush(stdout);
  WaitForEnd(signals);
  server.Stop();
  return 0;
}
