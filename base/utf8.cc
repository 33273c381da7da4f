#include "base/utf8.h"

namespace surge {

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

char32_t NextCodePoint(std::string_view text, size_t* pos) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data()) + *pos;
  int length = Utf8SequenceLength(s[0]);
  if (*pos + length > text.size()) length = 1;  // defensive: never read past the end
  *pos += length;
  switch (length) {
    case 1: return s[0];
    case 2: return ((s[0] & 0x1F) << 6) | (s[1] & 0x3F);
    case 3: return ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    default:
      return ((s[0] & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F);
  }
}

namespace {

// The WHATWG decoder's per-lead-byte state: how many continuation bytes follow and the
// allowed range of the first one (which excludes overlongs, surrogates and > U+10FFFF).
struct LeadInfo {
  int num_continuation;
  uint8_t lower;
  uint8_t upper;
};

LeadInfo ClassifyLead(uint8_t byte) {
  if (byte >= 0xC2 && byte <= 0xDF) return {1, 0x80, 0xBF};
  if (byte == 0xE0) return {2, 0xA0, 0xBF};
  if (byte >= 0xE1 && byte <= 0xEC) return {2, 0x80, 0xBF};
  if (byte == 0xED) return {2, 0x80, 0x9F};
  if (byte == 0xEE || byte == 0xEF) return {2, 0x80, 0xBF};
  if (byte == 0xF0) return {3, 0x90, 0xBF};
  if (byte >= 0xF1 && byte <= 0xF3) return {3, 0x80, 0xBF};
  if (byte == 0xF4) return {3, 0x80, 0x8F};
  return {-1, 0, 0};  // 0x80..0xC1, 0xF5..0xFF: never valid as a lead
}

// Length of the well-formed sequence at bytes[pos], or -(length of the maximal ill-formed
// prefix to replace with one U+FFFD). `truncated` (optional) tells whether that ill-formed
// prefix is a valid start that the end of `bytes` cut short.
int ScanSequence(std::string_view bytes, size_t pos, bool* truncated = nullptr) {
  const auto byte = static_cast<uint8_t>(bytes[pos]);
  if (byte < 0x80) return 1;
  LeadInfo info = ClassifyLead(byte);
  if (info.num_continuation < 0) return -1;
  size_t i = pos + 1;
  uint8_t lower = info.lower;
  uint8_t upper = info.upper;
  for (int k = 0; k < info.num_continuation; ++k, ++i) {
    if (i >= bytes.size()) {
      if (truncated != nullptr) *truncated = true;
      return -static_cast<int>(i - pos);
    }
    const auto next = static_cast<uint8_t>(bytes[i]);
    if (next < lower || next > upper) return -static_cast<int>(i - pos);
    lower = 0x80;
    upper = 0xBF;
  }
  return info.num_continuation + 1;
}

}  // namespace

bool IsValidUtf8(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (static_cast<uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    int length = ScanSequence(bytes, pos);
    if (length < 0) return false;
    pos += length;
  }
  return true;
}

bool AppendUtf8Lossy(std::string_view bytes, std::string* out) {
  size_t pos = 0;
  bool truncated = false;
  while (pos < bytes.size()) {
    int length = ScanSequence(bytes, pos, &truncated);
    if (length > 0) {
      out->append(bytes.substr(pos, length));
      pos += length;
    } else {
      out->append(kReplacementUtf8);
      pos += -length;
    }
  }
  return truncated;
}

std::string Utf8Lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  AppendUtf8Lossy(bytes, &out);
  return out;
}

bool IsJsWhitespace(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
    case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string_view TrimJsWhitespaceStart(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!IsJsWhitespace(NextCodePoint(text, &next))) break;
    pos = next;
  }
  return text.substr(pos);
}

std::string_view TrimJsWhitespaceEnd(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
    size_t pos = start;
    if (!IsJsWhitespace(NextCodePoint(text, &pos))) break;
    end = start;
  }
  return text.substr(0, end);
}

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace surge
