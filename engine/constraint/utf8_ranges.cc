#include "engine/constraint/utf8_ranges.h"

#include <algorithm>

namespace surge {
namespace {


void Encode(char32_t cp, int length, uint8_t* out) {
  static constexpr uint8_t kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (int i = length - 1; i > 0; --i) {
    out[i] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    cp >>= 6;
  }
  out[0] = static_cast<uint8_t>(length == 1 ? cp : (kLead[length] | cp));
}

// [lo, hi] of one encoded length: split until each piece is a product of byte ranges.
void AddRange(Grammar* g, char32_t lo, char32_t hi, int length, std::vector<ExprId>* alts) {
  for (int i = 1; i < length; ++i) {
    const char32_t m = (char32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        AddRange(g, lo, lo | m, length, alts);
        AddRange(g, (lo | m) + 1, hi, length, alts);
        return;
      }
      if ((hi & m) != m) {
        AddRange(g, lo, (hi & ~m) - 1, length, alts);
        AddRange(g, hi & ~m, hi, length, alts);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  Encode(lo, length, a);
  Encode(hi, length, b);
  std::vector<ExprId> seq;
  for (int i = 0; i < length; ++i) seq.push_back(g->Bytes(ByteSet::Range(a[i], b[i])));
  alts->push_back(g->Seq(std::move(seq)));
}

}  // namespace

CodePointRanges NormalizeRanges(CodePointRanges ranges) {
  CodePointRanges split;
  for (auto [lo, hi] : ranges) {
    hi = std::min(hi, kMaxCodePoint);
    if (lo > hi) continue;
    if (lo < 0xD800 && hi > 0xDFFF) {
      split.push_back({lo, 0xD7FF});
      split.push_back({0xE000, hi});
    } else if (lo >= 0xD800 && hi <= 0xDFFF) {
      continue;
    } else if (lo >= 0xD800 && lo <= 0xDFFF) {
      split.push_back({0xE000, hi});
    } else if (hi >= 0xD800 && hi <= 0xDFFF) {
      split.push_back({lo, 0xD7FF});
    } else {
      split.push_back({lo, hi});
    }
  }
  std::sort(split.begin(), split.end());
  CodePointRanges merged;
  for (auto r : split) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

CodePointRanges ComplementRanges(const CodePointRanges& ranges) {
  CodePointRanges out;
  char32_t next = 0;
  for (auto [lo, hi] : ranges) {
    if (lo > next) out.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return NormalizeRanges(std::move(out));
}

ExprId Utf8Expr(Grammar* grammar, const CodePointRanges& ranges) {
  std::vector<ExprId> alts;
  ByteSet ascii;
  static constexpr char32_t kBounds[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodePoint};
  for (auto [lo, hi] : ranges) {
    for (int length = 1; length <= 4 && lo <= hi; ++length) {
      char32_t top = std::min(hi, kBounds[length - 1]);
      if (lo > top) continue;
      if (length == 1) {
        ascii.AddRange(static_cast<uint8_t>(lo), static_cast<uint8_t>(top));
      } else {
        AddRange(grammar, lo, top, length, &alts);
      }
      lo = top + 1;
    }
  }
  if (!ascii.empty()) alts.insert(alts.begin(), grammar->Bytes(ascii));
  return grammar->Alt(std::move(alts));
}

}  // namespace surge
