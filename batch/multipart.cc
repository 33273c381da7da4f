#include "batch/multipart.h"

#include <cctype>

namespace surge::batch {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Splits `; key=value; key="quoted \" value"` parameters; calls `on_param(lower key, value)`.
// False on an unterminated quote.
template <typename OnParam>
bool ForEachParam(std::string_view params, OnParam on_param) {
  while (!params.empty()) {
    const size_t semicolon = params.find(';');
    if (semicolon == std::string_view::npos) return Trim(params).empty();
    params.remove_prefix(semicolon + 1);
    const size_t equals = params.find('=');
    if (equals == std::string_view::npos) return Trim(params).empty();
    const std::string key = Lower(Trim(params.substr(0, equals)));
    params.remove_prefix(equals + 1);
    params = Trim(params);
    std::string value;
    if (!params.empty() && params.front() == '"') {
      size_t i = 1;
      for (; i < params.size() && params[i] != '"'; ++i) {
        if (params[i] == '\\' && i + 1 < params.size()) ++i;
        value += params[i];
      }
      if (i >= params.size()) return false;
      params.remove_prefix(i + 1);
    } else {
      const size_t end = params.find(';');
      value = std::string(Trim(params.substr(0, end)));
      params.remove_prefix(end == std::string_view::npos ? params.size() : end);
    }
    on_param(key, std::move(value));
  }
  return true;
}

Status Malformed(std::string message) { return InvalidArgumentError("malformed multipart body: " + std::move(message)); }

// One part's header block (without its final blank line) into `part`.
Status ParsePartHeader(std::string_view header, MultipartPart* part) {
  bool has_disposition = false;
  while (!header.empty()) {
    const size_t end = header.find("\r\n");
    const std::string_view line = header.substr(0, end);
    header.remove_prefix(end == std::string_view::npos ? header.size() : end + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Malformed("a part header line has no ':'");
    const std::string name = Lower(Trim(line.substr(0, colon)));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (name == "content-type") {
      part->content_type = std::string(value);
    } else if (name == "content-disposition") {
      if (Lower(value.substr(0, value.find(';'))) != "form-data") return Malformed("a part is not form-data");
      has_disposition = true;
      const bool ok = ForEachParam(value.substr(value.find(';') == std::string_view::npos ? value.size() : value.find(';')),
                                   [part](const std::string& key, std::string v) {
                                     if (key == "name") part->name = std::move(v);
                                     if (key == "filename") part->filename = std::move(v);
                                   });
      if (!ok) return Malformed("an unterminated quoted string in Content-Disposition");
    }
  }
  if (!has_disposition || part->name.empty()) return Malformed("a part has no Content-Disposition name");
  return OkStatus();
}

}  // namespace

StatusOr<std::string> MultipartBoundary(std::string_view content_type) {
  const size_t semicolon = content_type.find(';');
  if (Lower(Trim(content_type.substr(0, semicolon))) != "multipart/form-data") {
    return InvalidArgumentError("the body must be multipart/form-data, got Content-Type '" +
                                std::string(content_type.substr(0, 100)) + "'");
  }
  std::string boundary;
  const bool ok = semicolon != std::string_view::npos &&
                  ForEachParam(content_type.substr(semicolon), [&](const std::string& key, std::string value) {
                    if (key == "boundary") boundary = std::move(value);
                  });
  if (!ok || boundary.empty() || boundary.size() > 70) {
    return InvalidArgumentError("multipart/form-data needs a boundary of 1 to 70 characters");
  }
  return boundary;
}

StatusOr<std::vector<MultipartPart>> ParseMultipart(std::string_view body, std::string_view boundary,
                                                    const MultipartLimits& limits) {
  const std::string first = "--" + std::string(boundary);
  const std::string delimiter = "\r\n" + first;
  if (!body.starts_with(first)) return Malformed("it does not start with the boundary");
  size_t pos = first.size();
  std::vector<MultipartPart> parts;
  for (;;) {
    if (body.substr(pos, 2) == "--") return parts;  // the close delimiter (an epilogue may follow)
    if (body.substr(pos, 2) != "\r\n") return Malformed("a boundary is not followed by CRLF");
    pos += 2;
    if (parts.size() == limits.max_parts) return Malformed("more than " + std::to_string(limits.max_parts) + " parts");
    const size_t header_end = body.find("\r\n\r\n", pos);
    const size_t header_bytes = header_end == std::string_view::npos ? body.size() - pos : header_end - pos;
    if (header_bytes > limits.max_part_header_bytes) return Malformed("a part header over the size limit");
    if (header_end == std::string_view::npos) return Malformed("a part header does not end");
    MultipartPart part;
    RETURN_IF_ERROR(ParsePartHeader(body.substr(pos, header_end - pos), &part));
    const size_t data_start = header_end + 4;
    const size_t data_end = body.find(delimiter, data_start);
    if (data_end == std::string_view::npos) return Malformed("a part does not end with the boundary");
    part.data = body.substr(data_start, data_end - data_start);
    parts.push_back(std::move(part));
    pos = data_end + delimiter.size();
  }
}

}  // namespace surge::batch
