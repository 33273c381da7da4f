#include "net/sse.h"

#include <charconv>

namespace surge::net {
namespace {

// Appends "<field>: <line>\n" for each line of `value` (split on \r\n, \n, \r).
void AppendFieldLines(std::string* out, std::string_view field, std::string_view value) {
  size_t start = 0;
  while (true) {
    size_t end = value.find_first_of("\r\n", start);
    out->append(field).append(": ").append(value.substr(start, end - start)).push_back('\n');
    if (end == std::string_view::npos) return;
    start = end + ((value[end] == '\r' && end + 1 < value.size() && value[end + 1] == '\n') ? 2 : 1);
  }
}

// Field values are single lines; strip line breaks rather than corrupt the stream.
std::string OneLine(std::string_view value) {
  std::string out(value);
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

std::string EncodeSseEvent(const SseEvent& event) {
  std::string out;
  out.reserve(event.data.size() + 16);
  if (!event.event.empty()) out.append("event: ").append(OneLine(event.event)).push_back('\n');
  if (!event.id.empty()) out.append("id: ").append(OneLine(event.id)).push_back('\n');
  if (event.retry_ms) out.append("retry: ").append(std::to_string(*event.retry_ms)).push_back('\n');
  AppendFieldLines(&out, "data", event.data);
  out.push_back('\n');
  return out;
}

std::string EncodeSseData(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 8);
  AppendFieldLines(&out, "data", data);
  out.push_back('\n');
  return out;
}

std::string EncodeSseComment(std::string_view text) {
  std::string out;
  AppendFieldLines(&out, "", text);  // ": text\n" per line
  out.push_back('\n');
  return out;
}

HttpHeaders SseHeaders() {
  return {{"Content-Type", "text/event-stream"},
          {"Cache-Control", "no-cache"},
          {"X-Accel-Buffering", "no"}};
}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>* events) {
  // A UTF-8 BOM may only come as the stream's first bytes, and it may arrive split.
  static constexpr std::string_view kBom = "\xEF\xBB\xBF";
  while (at_stream_start_ && !bytes.empty()) {
    if (bytes.front() != kBom[bom_bytes_seen_]) {
      line_.append(kBom.substr(0, bom_bytes_seen_));  // not a BOM after all: it was data
      at_stream_start_ = false;
      break;
    }
    bytes.remove_prefix(1);
    at_stream_start_ = ++bom_bytes_seen_ < kBom.size();
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      ProcessLine(line_, events);
      line_.clear();
      continue;
    }
    line_.push_back(c);
    if (line_.size() + data_.size() > max_event_bytes_) {
      return DataLossError("server-sent event longer than " + std::to_string(max_event_bytes_) + " bytes");
    }
  }
  return OkStatus();
}

void SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>* events) {
  if (line.empty()) {
    Dispatch(events);
    return;
  }
  if (line.front() == ':') return;  // comment
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (field == "data") {
    data_.append(value).push_back('\n');
    has_data_ = true;
  } else if (field == "event") {
    event_type_ = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_event_id_ = std::string(value);
  } else if (field == "retry") {
    int64_t retry = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), retry);
    if (ec == std::errc() && end == value.data() + value.size() && !value.starts_with('-')) {
      retry_ms_ = retry;
    }
  }  // other fields are ignored, as the spec says
}

void SseParser::Dispatch(std::vector<SseEvent>* events) {
  if (has_data_) {
    data_.pop_back();  // the last line's '\n'
    events->push_back({std::move(event_type_), std::move(data_), last_event_id_, retry_ms_});
  }
  data_.clear();
  event_type_.clear();
  has_data_ = false;
  retry_ms_.reset();
}

}  // namespace surge::net
