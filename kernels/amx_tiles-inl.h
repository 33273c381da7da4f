// AMX tile operations behind one interface with two implementations: the hardware
// instructions (HardwareTiles) and a plain C++ model of them (EmulatedTiles) that runs on
// any CPU, so the AMX kernels' layouts, edges and epilogues are tested on machines that
// do not expose AMX. Include inside a `#pragma GCC target` region that has
// amx-tile,amx-int8,amx-bf16 (packed_matmul_amx.cc, machine_limits.cc); hence no include
// guard and an anonymous namespace.
//
// Tile numbers are template arguments because the instructions encode them. Loads and
// stores are inline asm with a "memory" clobber (GCC 12's _tile_loadd has none, so a
// store to the buffer a tile is then loaded from could be moved past the load).

namespace surge {
namespace {

// The 64-byte operand of ldtilecfg (palette 1): per tile, bytes per row and rows.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// The layout every kernel here uses, with A and B tiles of `k_bytes` per row of A (64, or
// 32 for int4 groups of 32): tmm0..3 are the accumulators C[r][c] = tmm(2r + c) of
// 16 x 16 int32 or f32, tmm4..5 the A tiles (16 rows of x, k_bytes each), tmm6..7 the
// B tiles (k_bytes / 4 rows of 64 bytes: 16 outputs x one k-quad or k-pair).
constexpr TileConfig MakeTileConfig(int k_bytes) {
  TileConfig c;
  for (int t = 0; t < 4; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = 16;
  }
  for (int t = 4; t < 6; ++t) {
    c.colsb[t] = static_cast<uint16_t>(k_bytes);
    c.rows[t] = 16;
  }
  for (int t = 6; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = static_cast<uint8_t>(k_bytes / 4);
  }
  return c;
}
constexpr TileConfig kTileConfig64 = MakeTileConfig(64);
constexpr TileConfig kTileConfig32 = MakeTileConfig(32);

struct HardwareTiles {
  // Loads `config` unless this thread's last one is it: a tile config is per thread, and
  // a pool worker runs whichever kernel comes; ldtilecfg also zeroes every tile.
  static void Configure(const TileConfig& config) {
    thread_local const TileConfig* loaded = nullptr;
    if (loaded == &config) return;
    asm volatile("ldtilecfg %0" ::"m"(config));
    loaded = &config;
  }
  template <int T>
  static void Zero() {
    asm volatile("tilezero %%tmm%c0" ::"i"(T));
  }
  template <int T>
  static void Load(const void* base, int64_t stride) {
    asm volatile("tileloadd (%0,%1,1), %%tmm%c2" ::"r"(base), "r"(stride), "i"(T) : "memory");
  }
  template <int T>
  static void Store(void* base, int64_t stride) {
    asm volatile("tilestored %%tmm%c0, (%1,%2,1)" ::"i"(T), "r"(base), "r"(stride) : "memory");
  }
  // C += A (u8) . B (s8), A (s8) . B (u8), A (bf16) . B (bf16) into f32.
  template <int C, int A, int B>
  static void DotUS() {
    asm volatile("tdpbusd %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
  template <int C, int A, int B>
  static void DotSU() {
    asm volatile("tdpbsud %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
  template <int C, int A, int B>
  static void DotBf16() {
    asm volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" ::"i"(C), "i"(A), "i"(B));
  }
};

// The instructions as the Intel SDM's pseudocode defines them, one thread's tile state in
// thread-local memory. Integer results are exact, so they equal the hardware's bit for
// bit; the bf16 model does the SDM's two sequential f32 adds per pair (products of bf16
// are exact in f32), which the hardware need not match bit for bit (it also flushes
// denormals): tests hold the bf16 kernels to error bounds, not bits.
struct EmulatedTiles {
  struct State {
    alignas(64) uint8_t data[8][16][64];
    TileConfig config;
  };
  static State& state() {
    thread_local State s;
    return s;
  }
  static void Configure(const TileConfig& config) {
    std::memset(state().data, 0, sizeof(state().data));
    state().config = config;
  }
  template <int T>
  static void Zero() {
    std::memset(state().data[T], 0, sizeof(state().data[T]));
  }
  template <int T>
  static void Load(const void* base, int64_t stride) {
    const TileConfig& c = state().config;
    for (int r = 0; r < c.rows[T]; ++r)
      std::memcpy(state().data[T][r], static_cast<const uint8_t*>(base) + r * stride, c.colsb[T]);
  }
  template <int T>
  static void Store(void* base, int64_t stride) {
    const TileConfig& c = state().config;
    for (int r = 0; r < c.rows[T]; ++r)
      std::memcpy(static_cast<uint8_t*>(base) + r * stride, state().data[T][r], c.colsb[T]);
  }
  template <bool kSignedA, bool kSignedB, int C, int A, int B>
  static void DotInt8() {
    State& s = state();
    for (int m = 0; m < s.config.rows[C]; ++m) {
      for (int n = 0; n < s.config.colsb[C] / 4; ++n) {
        uint32_t acc;  // wraps like the hardware's dword adds
        std::memcpy(&acc, &s.data[C][m][4 * n], 4);
        for (int k = 0; k < s.config.colsb[A] / 4; ++k) {
          for (int j = 0; j < 4; ++j) {
            const uint8_t a = s.data[A][m][4 * k + j], b = s.data[B][k][4 * n + j];
            const int32_t av = kSignedA ? static_cast<int8_t>(a) : a;
            const int32_t bv = kSignedB ? static_cast<int8_t>(b) : b;
            acc += static_cast<uint32_t>(av * bv);
          }
        }
        std::memcpy(&s.data[C][m][4 * n], &acc, 4);
      }
    }
  }
  template <int C, int A, int B>
  static void DotUS() {
    DotInt8<false, true, C, A, B>();
  }
  template <int C, int A, int B>
  static void DotSU() {
    DotInt8<true, false, C, A, B>();
  }
  template <int C, int A, int B>
  static void DotBf16() {
    State& s = state();
    auto bf16 = [](const uint8_t* p) {
      uint32_t bits = uint32_t{p[0]} << 16 | uint32_t{p[1]} << 24;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    };
    for (int m = 0; m < s.config.rows[C]; ++m) {
      for (int n = 0; n < s.config.colsb[C] / 4; ++n) {
        float acc;
        std::memcpy(&acc, &s.data[C][m][4 * n], 4);
        for (int k = 0; k < s.config.colsb[A] / 4; ++k) {
          for (int j = 0; j < 2; ++j)
            acc += bf16(&s.data[A][m][4 * k + 2 * j]) * bf16(&s.data[B][k][4 * n + 2 * j]);
        }
        std::memcpy(&s.data[C][m][4 * n], &acc, 4);
      }
    }
  }
};

}  // namespace
}  // namespace surge
