// ByteSet: a set of byte values (0..255), the label of every terminal in a grammar.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace surge {

class ByteSet {
 public:
  ByteSet() = default;
  static ByteSet Single(uint8_t byte) { ByteSet s; s.Add(byte); return s; }
  static ByteSet Range(uint8_t lo, uint8_t hi) { ByteSet s; s.AddRange(lo, hi); return s; }

  void Add(uint8_t byte) { words_[byte >> 6] |= uint64_t{1} << (byte & 63); }
  void AddRange(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) Add(static_cast<uint8_t>(b));
  }
  void AddAll(const ByteSet& other) {
    for (int i = 0; i < 4; ++i) words_[i] |= other.words_[i];
  }
  bool Contains(uint8_t byte) const { return (words_[byte >> 6] >> (byte & 63)) & 1; }
  bool empty() const { return (words_[0] | words_[1] | words_[2] | words_[3]) == 0; }
  ByteSet Complement() const {
    ByteSet s;
    for (int i = 0; i < 4; ++i) s.words_[i] = ~words_[i];
    return s;
  }
  bool operator==(const ByteSet& other) const = default;
  uint64_t word(int i) const { return words_[i]; }
  size_t Hash() const {
    uint64_t h = 0;
    for (uint64_t w : words_) h = (h ^ w) * 0x100000001b3ULL + (h >> 29);
    return static_cast<size_t>(h);
  }

 private:
  std::array<uint64_t, 4> words_{};
};

}  // namespace surge
