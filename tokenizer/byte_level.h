// GPT-2's reversible byte <-> printable-character map used by byte-level BPE vocabularies.
#pragma once

#include <string>
#include <string_view>

namespace surge {

// The UTF-8 of the character that stands for `byte` in a byte-level vocabulary.
std::string_view ByteToUnicode(uint8_t byte);

// The byte a byte-level character stands for, or -1 when `cp` is not one of the 256.
int UnicodeToByte(char32_t cp);

// Appends the byte-level form of `bytes` (each byte becomes one character).
void AppendByteLevel(std::string_view bytes, std::string* out);

}  // namespace surge
