// libFuzzer target: the server's HTTP/1.1 request parser (net/request_reader.h), fed the
// way a socket feeds it, in pieces, with pipelined requests after a complete one.
//
// Input: byte 0 % 8 is how many piece-length bytes follow (0: the stream arrives whole);
// they give the lengths of successive reads, cycled, each byte b meaning b + 1 bytes. The
// rest is the client's byte stream. Seeds in fuzz/corpus/http_request start with "\0".
//
// Oracles besides crashes, sanitizer reports and CHECKs: the stream read in pieces reads
// as when it arrives whole (the server must not depend on TCP segmentation), except that
// a reader still waiting for bytes may be behind (Beast checks an incomplete start line
// that arrives in one read at once, but after need_more waits for the header's end); a
// body never passes the limit; kHeaderAccepted comes at most once per request.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/check.h"
#include "net/request_reader.h"

namespace {

using surge::net::internal::ParsedRequest;
using surge::net::internal::ReadEvent;
using surge::net::internal::ReadResult;
using surge::net::internal::RequestReader;
using surge::net::internal::RequestReaderOptions;

// Small limits, so that the fuzzer reaches the 413 and 431 paths with short inputs.
const RequestReaderOptions kOptions{.max_header_bytes = 4 << 10, .max_body_bytes = 64 << 10};

void AppendRequest(const ParsedRequest& parsed, std::string* log) {
  const surge::net::HttpRequest& request = parsed.request;
  CHECK(request.body.size() <= kOptions.max_body_bytes) << request.body.size();
  CHECK(request.target.starts_with(request.path));
  log->append("request ").append(request.method).append(" ").append(request.target);
  log->append(" v").append(std::to_string(request.version));
  for (const auto& [name, value] : request.headers) {
    log->append(" ").append(name).append(": ").append(value);
  }
  log->append(" body ").append(std::to_string(request.body.size())).append(":");
  log->append(request.body);
  log->append(parsed.head_request ? " head" : "").append(parsed.keep_alive ? " keep\n" : "\n");
}

// What a connection does with the reader's events; false once it rejected the stream.
bool Drain(RequestReader& reader, std::string& input, bool* header_accepted, std::string* log) {
  while (true) {
    ReadResult result = reader.Feed(input);
    switch (result.event) {
      case ReadEvent::kNeedMore:
        return true;
      case ReadEvent::kHeaderAccepted:
        CHECK(!*header_accepted) << "a second kHeaderAccepted for one request";
        *header_accepted = true;
        log->append(result.expects_continue ? "continue\n" : "header\n");
        break;
      case ReadEvent::kRejected:
        CHECK(result.status == 400 || result.status == 413 || result.status == 431);
        log->append("reject ").append(std::to_string(result.status)).append(" ");
        log->append(result.message).append("\n");
        return false;
      case ReadEvent::kComplete:
        AppendRequest(result.request, log);
        *header_accepted = false;
        reader.Reset();  // what is left of `input` is the next, pipelined request
        break;
    }
  }
}

struct Transcript {
  std::string log;       // one line per event
  bool waiting = false;  // the input ended with the reader wanting more
};

// The reader's transcript of `stream` delivered in reads of `lengths` (cycled).
Transcript Read(std::string_view stream, std::span<const uint8_t> lengths) {
  RequestReader reader(kOptions);
  std::string input;
  Transcript transcript;
  bool header_accepted = false;
  size_t offset = 0;
  for (size_t i = 0; offset < stream.size(); ++i) {
    size_t length = lengths.empty() ? stream.size() : lengths[i % lengths.size()] + size_t{1};
    length = std::min(length, stream.size() - offset);
    input.append(stream.substr(offset, length));
    offset += length;
    if (!Drain(reader, input, &header_accepted, &transcript.log)) return transcript;
  }
  transcript.waiting = true;
  return transcript;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t num_lengths = std::min<size_t>(data[0] % 8, size - 1);
  std::span<const uint8_t> lengths(data + 1, num_lengths);
  std::string_view stream(reinterpret_cast<const char*>(data) + 1 + num_lengths,
                          size - 1 - num_lengths);
  Transcript in_pieces = Read(stream, lengths);
  if (num_lengths == 0) return 0;
  Transcript whole = Read(stream, {});
  bool pieces_behind = in_pieces.log.size() <= whole.log.size();
  const Transcript& behind = pieces_behind ? in_pieces : whole;
  const Transcript& ahead = pieces_behind ? whole : in_pieces;
  bool consistent = behind.waiting ? ahead.log.starts_with(behind.log) : ahead.log == behind.log;
  CHECK(consistent) << "\nin pieces:\n" << in_pieces.log << "\nwhole:\n" << whole.log;
  return 0;
}
