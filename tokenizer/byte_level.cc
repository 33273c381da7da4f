#include "tokenizer/byte_level.h"

#include <array>
#include <cstdint>

#include "base/utf8.h"

namespace surge {
namespace {

// Printable bytes map to themselves; the other 68 map to U+0100.. in byte order.
struct ByteLevelTables {
  std::array<std::string, 256> byte_to_utf8;
  std::array<int16_t, 324> code_point_to_byte;  // 323 = U+0100 + 67 is the largest mapped

  ByteLevelTables() {
    code_point_to_byte.fill(-1);
    int num_shifted = 0;
    for (int byte = 0; byte < 256; ++byte) {
      bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                       (byte >= 0xAE && byte <= 0xFF);
      char32_t cp = printable ? static_cast<char32_t>(byte) : 256 + num_shifted++;
      AppendUtf8(cp, &byte_to_utf8[byte]);
      code_point_to_byte[cp] = static_cast<int16_t>(byte);
    }
  }
};

const ByteLevelTables& Tables() {
  static const ByteLevelTables tables;
  return tables;
}

}  // namespace

std::string_view ByteToUnicode(uint8_t byte) { return Tables().byte_to_utf8[byte]; }

int UnicodeToByte(char32_t cp) {
  return cp < Tables().code_point_to_byte.size() ? Tables().code_point_to_byte[cp] : -1;
}

void AppendByteLevel(std::string_view bytes, std::string* out) {
  const ByteLevelTables& tables = Tables();
  for (char byte : bytes) out->append(tables.byte_to_utf8[static_cast<uint8_t>(byte)]);
}

}  // namespace surge
