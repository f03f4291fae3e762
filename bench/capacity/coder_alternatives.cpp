// SPDX-License-Identifier: Apache-2.0
// Exponent coder alternatives for capacity mode (docs/DESIGN.md section 2), measured
// like for like in one program, single thread:
//   coder_alternatives FILE.bf16 REPS
// For every block of 65536 exponents ((v >> 7) & 0xFF of each bf16 value):
//   huffman-S: the format's 12-bit canonical Huffman code (cap_code_lengths,
//     cap_codes), S interleaved bit streams with u16 sizes as in 4.6.2;
//     decoded one 12-bit table lookup per code.
//   rans-N: order-0 rANS, one frequency table per block normalised to
//     2^12 (the 4096-entry slot table of the decoder, as Huffman's 12-bit
//     lookup), 32-bit states in [2^16, 2^32), 16-bit renormalisation (at
//     most one word per symbol, so branchless), N states (element j ->
//     state j mod N) sharing one word stream. Coded block: table (first,
//     last, 12 bits per value first..last), N u32 final states, the words;
//     no stream sizes (one shared stream). A block of one value is its
//     table alone (4 bytes; Huffman: 3), 0 bits per element as in 4.6.2.
// Encode and decode run over the whole input (all blocks, tables included),
// best of REPS alternating runs; GB/s are of the bf16 data (2 bytes per
// element), so they compare with bench/results/capacity.md. Every decode is
// checked against the input exponents (exit 1, or abort on a malformed
// block, if one differs). Ratios are the bf16 frame ratio the
// exponent coding would give: raw / (64 + n residual bytes + coded exponent
// bytes + 4 index bytes per block); alignment padding is left out.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "core/capacity/format.h"

using namespace splitzip;

namespace {

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// Thread CPU time: the machine is shared, so this is the coder's speed when
// it has a core; wall clock is reported next to it.
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint32_t load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

constexpr uint32_t kSlack = 16;  // readers and writers touch up to 8 bytes past their position

void histogram(const uint8_t* e, uint32_t m, uint32_t counts[256]) {
  // four partial histograms: consecutive equal exponents would otherwise
  // serialise on one counter
  uint32_t c[4][256] = {};
  uint32_t j = 0;
  for (; j + 4 <= m; j += 4) {
    ++c[0][e[j]];
    ++c[1][e[j + 1]];
    ++c[2][e[j + 2]];
    ++c[3][e[j + 3]];
  }
  for (; j < m; ++j) ++c[0][e[j]];
  for (int v = 0; v < 256; ++v) counts[v] = c[0][v] + c[1][v] + c[2][v] + c[3][v];
}

// ---------------------------------------------------------------- Huffman
// Block layout as FORMAT.md 4.6.2 with S streams: table, S u16 sizes, streams.
template <uint32_t S>
struct Huffman {
  std::vector<uint8_t> scratch = std::vector<uint8_t>(S * (3072 * 32 / S + kSlack));
  static constexpr uint32_t kStreamCap = 3072 * 32 / S + kSlack;  // 12 bits x ceil(65536/S) codes

  // Returns the block's bytes written at out.
  uint64_t encode(const uint8_t* e, uint32_t m, uint8_t* out) {
    uint32_t counts[256];
    histogram(e, m, counts);
    CapTable t;
    cap_code_lengths(counts, &t);
    write_cap_table(t, out);
    if (t.symbols == 1) return t.bytes;
    uint16_t code[256];
    cap_codes(t, code);
    uint32_t cl[256];  // code | len << 16: one load per element
    for (int v = 0; v < 256; ++v) cl[v] = code[v] | uint32_t{t.len[v]} << 16;
    uint8_t* p[S];
    uint64_t bits[S] = {};
    uint32_t cnt[S] = {};
    for (uint32_t s = 0; s < S; ++s) p[s] = scratch.data() + s * kStreamCap;
    const uint32_t rows = m / S;
    for (uint32_t i = 0; i < rows; ++i) {
      const uint8_t* row = e + i * S;
      for (uint32_t s = 0; s < S; ++s) {
        const uint32_t c = cl[row[s]];
        bits[s] |= uint64_t{c & 0xFFFFu} << cnt[s];
        cnt[s] += c >> 16;
        std::memcpy(p[s], &bits[s], 8);  // branchless flush of whole bytes
        p[s] += cnt[s] >> 3;
        bits[s] >>= cnt[s] & ~7u;
        cnt[s] &= 7;
      }
    }
    for (uint32_t s = 0; s < m - rows * S; ++s) {
      const uint32_t c = cl[e[rows * S + s]];
      bits[s] |= uint64_t{c & 0xFFFFu} << cnt[s];
      cnt[s] += c >> 16;
      std::memcpy(p[s], &bits[s], 8);
      p[s] += cnt[s] >> 3;
      bits[s] >>= cnt[s] & ~7u;
      cnt[s] &= 7;
    }
    uint8_t* sizes = out + t.bytes;
    uint8_t* dst = sizes + 2 * S;
    for (uint32_t s = 0; s < S; ++s) {
      if (cnt[s]) *p[s]++ = static_cast<uint8_t>(bits[s]);
      const uint8_t* begin = scratch.data() + s * kStreamCap;
      const uint32_t z = static_cast<uint32_t>(p[s] - begin);
      sizes[2 * s] = static_cast<uint8_t>(z);
      sizes[2 * s + 1] = static_cast<uint8_t>(z >> 8);
      std::memcpy(dst, begin, z);
      dst += z;
    }
    return static_cast<uint64_t>(dst - out);
  }

  // Decodes a block written by encode (trusted input: speed, not checks).
  void decode(const uint8_t* blk, uint64_t size, uint32_t m, uint8_t* e) {
    CapTable t;
    if (parse_cap_table(blk, size, 256, &t) != Status::ok) std::abort();
    if (t.symbols == 1) {
      std::memset(e, static_cast<int>(t.first), m);
      return;
    }
    uint16_t table[kCapTableSize];
    cap_decode_table(t, table);
    const uint8_t* base[S];
    uint64_t pos[S];
    const uint8_t* q = blk + t.bytes + 2 * S;
    for (uint32_t s = 0; s < S; ++s) {
      base[s] = q;
      pos[s] = 0;
      q += load16(blk + t.bytes + 2 * s);
    }
    const uint32_t rows = m / S;
    for (uint32_t i = 0; i < rows; ++i) {
      // (the register copies of Rans::decode measured slower here)
      uint8_t* row = e + i * S;
      for (uint32_t s = 0; s < S; ++s) {
        const uint32_t ent = table[(load64(base[s] + (pos[s] >> 3)) >> (pos[s] & 7)) & (kCapTableSize - 1)];
        row[s] = static_cast<uint8_t>(ent);
        pos[s] += ent >> 8;
      }
    }
    for (uint32_t s = 0; s < m - rows * S; ++s) {
      const uint32_t ent = table[(load64(base[s] + (pos[s] >> 3)) >> (pos[s] & 7)) & (kCapTableSize - 1)];
      e[rows * S + s] = static_cast<uint8_t>(ent);
      pos[s] += ent >> 8;
    }
  }
};

// ---------------------------------------------------------------- rANS
// Block: first, last, 12-bit frequencies of first..last packed LSB-first
// (0 = absent); with one value present that is all (0 bits per element).
// Otherwise N u32 final states (state 0 first) and the 16-bit words.
constexpr uint32_t kScaleBits = 12;
constexpr uint32_t kScale = 1u << kScaleBits;
constexpr uint32_t kLow = 1u << 16;  // states live in [kLow, kLow << 16)

uint32_t rans_table_bytes(uint32_t first, uint32_t last) { return 2 + ((last - first + 1) * 12 + 7) / 8; }

// Frequencies summing to kScale, each present value >= 1: rounded shares,
// then unit corrections where they cost the fewest bits.
void normalise(const uint32_t counts[256], uint32_t m, uint32_t freq[256]) {
  int64_t sum = 0;
  for (int v = 0; v < 256; ++v) {
    freq[v] = 0;
    if (!counts[v]) continue;
    const uint64_t f = (uint64_t{counts[v]} * kScale + m / 2) / m;
    freq[v] = f ? static_cast<uint32_t>(f) : 1;
    sum += freq[v];
  }
  while (sum != kScale) {
    const bool down = sum > kScale;
    int best = -1;
    double best_cost = 1e300;
    for (int v = 0; v < 256; ++v) {
      if (!counts[v] || (down && freq[v] == 1)) continue;
      // bits added by moving freq[v] one step
      const double f = freq[v];
      const double cost = down ? counts[v] * std::log2(f / (f - 1)) : -counts[v] * std::log2((f + 1) / f);
      if (cost < best_cost) {
        best_cost = cost;
        best = v;
      }
    }
    freq[best] += down ? -1 : 1;
    sum += down ? -1 : 1;
  }
}

template <uint32_t N>
struct Rans {
  struct EncSym {
    uint64_t rcp;   // ceil(2^44 / freq): x / freq = (x * rcp) >> 44 for x < 2^32
    uint32_t xmax;  // renormalise while x >= xmax
    uint32_t bias;  // cum
    uint32_t cmpl;  // kScale - freq
  };
  std::vector<uint8_t> scratch = std::vector<uint8_t>(2 * kCapBlockElems + 4 * N + kSlack);

  uint64_t encode(const uint8_t* e, uint32_t m, uint8_t* out) {
    uint32_t counts[256];
    histogram(e, m, counts);
    uint32_t freq[256];
    normalise(counts, m, freq);
    uint32_t first = 255, last = 0, symbols = 0;
    for (uint32_t v = 0; v < 256; ++v)
      if (freq[v]) {
        first = std::min(first, v);
        last = v;
        ++symbols;
      }
    out[0] = static_cast<uint8_t>(first);
    out[1] = static_cast<uint8_t>(last);
    const uint32_t tb = rans_table_bytes(first, last);
    std::memset(out + 2, 0, tb - 2);
    for (uint32_t i = 0; i <= last - first; ++i) {
      const uint32_t f = freq[first + i] & (kScale - 1);  // a single value (4096) is written as 0
      const uint32_t bit = 12 * i;
      const uint32_t w = f << (bit & 7);
      out[2 + bit / 8] |= static_cast<uint8_t>(w);
      out[2 + bit / 8 + 1] |= static_cast<uint8_t>(w >> 8);
      if ((bit & 7) + 12 > 16) out[2 + bit / 8 + 2] |= static_cast<uint8_t>(w >> 16);
    }
    if (symbols == 1) return tb;
    EncSym sym[256];
    uint32_t cum = 0;
    for (uint32_t v = 0; v < 256; ++v) {
      const uint32_t f = freq[v];
      sym[v] = {};
      if (!f) continue;
      sym[v].rcp = ((uint64_t{1} << 44) + f - 1) / f;
      sym[v].xmax = ((kLow >> kScaleBits) << 16) * f;
      sym[v].bias = cum;
      sym[v].cmpl = kScale - f;
      cum += f;
    }
    uint32_t x[N];
    for (uint32_t s = 0; s < N; ++s) x[s] = kLow;
    uint8_t* const end = scratch.data() + scratch.size();
    uint8_t* p = end;
    auto put = [&](uint32_t& xs, const EncSym& q) {
      // At most one 16-bit word (x >> 16 < 2^16 <= xmax). Branchless, in
      // arithmetic form: GCC turns the ?: form into a mispredicted branch.
      const uint32_t r = xs >= q.xmax;
      std::memcpy(p - 2, &xs, 2);  // written always, kept only if r
      p -= r << 1;
      xs >>= r << 4;
      const uint32_t d = static_cast<uint32_t>((static_cast<unsigned __int128>(xs) * q.rcp) >> 44);
      xs += q.bias + d * q.cmpl;  // (d << 12) + (x mod f) + cum
    };
    // Reverse order: the tail row first, then full rows from the last.
    const uint32_t rows = m / N;
    for (uint32_t s = m - rows * N; s-- > 0;) put(x[s], sym[e[rows * N + s]]);
    for (uint32_t i = rows; i-- > 0;) {
      const uint8_t* row = e + i * N;
      for (uint32_t s = N; s-- > 0;) put(x[s], sym[row[s]]);  // (register copies as in decode: slower here)
    }
    for (uint32_t s = N; s-- > 0;) {
      p -= 4;
      std::memcpy(p, &x[s], 4);
    }
    const uint64_t z = static_cast<uint64_t>(end - p);
    std::memcpy(out + tb, p, z);
    return tb + z;
  }

  void decode(const uint8_t* blk, uint64_t size, uint32_t m, uint8_t* e) {
    const uint32_t first = blk[0], last = blk[1];
    const uint32_t tb = rans_table_bytes(first, last);
    if (first == last) {
      std::memset(e, static_cast<int>(first), m);
      return;
    }
    // slot -> freq | (slot - cum) << 16 (freq <= 4095 with >= 2 values),
    // and slot -> symbol: the state update is two 16-bit loads, one
    // multiply and one add
    uint32_t table[kScale];
    uint8_t symbol[kScale];
    uint32_t cum = 0;
    for (uint32_t i = 0; i <= last - first; ++i) {
      const uint32_t bit = 12 * i;
      const uint32_t f = (load32(blk + 2 + bit / 8) >> (bit & 7)) & (kScale - 1);
      if (cum + f > kScale) std::abort();
      for (uint32_t k = 0; k < f; ++k) table[cum + k] = f | k << 16;
      std::memset(symbol + cum, static_cast<int>(first + i), f);
      cum += f;
    }
    if (cum != kScale) std::abort();
    const uint8_t* p = blk + tb;
    uint32_t x[N];
    for (uint32_t s = 0; s < N; ++s) x[s] = load32(p + 4 * s);
    p += 4 * N;
    auto get = [&](uint32_t& xs) -> uint8_t {
      const uint32_t slot = xs & (kScale - 1);
      const uint32_t ent = table[slot];
      xs = (ent & 0xFFFFu) * (xs >> kScaleBits) + (ent >> 16);
      // One word at most, branchless: GCC compiles a ?: here to a
      // mispredicted branch, so x86-64 gets two cmovs.
      const uint32_t xr = xs << 16 | load16(p);
      const uint8_t* pn = p + 2;
#if defined(__x86_64__) && defined(__GNUC__)
      asm("cmpl %[low], %[x]\n\tcmovb %[xr], %[x]\n\tcmovb %[pn], %[p]"
          : [x] "+r"(xs), [p] "+r"(p)
          : [xr] "r"(xr), [pn] "r"(pn), [low] "i"(kLow)
          : "cc");
#else
      const uint32_t r = xs < kLow;
      xs = r ? xr : xs;
      p = r ? pn : p;
#endif
      return symbol[slot];
    };
    const uint32_t rows = m / N;
    for (uint32_t i = 0; i < rows; ++i) {
      if constexpr (N <= 8) {
        // States copied to scalars for the row, symbols stored once: a byte
        // store to e could alias the array, which keeps GCC from holding
        // the states in registers. (With 32 states they do not fit anyway,
        // and the copies measured slower.)
        uint32_t xs[N];
        uint8_t out[N];
        for (uint32_t s = 0; s < N; ++s) xs[s] = x[s];
        for (uint32_t s = 0; s < N; ++s) out[s] = get(xs[s]);
        for (uint32_t s = 0; s < N; ++s) x[s] = xs[s];
        std::memcpy(e + i * N, out, N);
      } else {
        uint8_t* row = e + i * N;
        for (uint32_t s = 0; s < N; ++s) row[s] = get(x[s]);
      }
    }
    for (uint32_t s = 0; s < m - rows * N; ++s) e[rows * N + s] = get(x[s]);
    // the encoder started every state at kLow and the words are used up
    for (uint32_t s = 0; s < N; ++s)
      if (x[s] != kLow) std::abort();
    if (p != blk + size) std::abort();
  }
};

struct Measured {
  std::string name;
  uint64_t exp_bytes = 0;
  double enc_wall = 1e30, dec_wall = 1e30, enc_cpu = 1e30, dec_cpu = 1e30;
  bool exact = true;
};

template <class Coder>
Measured measure(const char* name, const std::vector<uint8_t>& exps, int reps) {
  const uint64_t n = exps.size();
  const uint64_t nb = cap_blocks(n);
  Coder c;
  // Bound: 2 bytes per element plus a table per block.
  std::vector<uint8_t> frame(2 * n + nb * 1024 + kSlack);
  std::vector<uint64_t> index(nb);
  std::vector<uint8_t> dec(n + kSlack);
  Measured r;
  r.name = name;
  for (int k = 0; k < reps; ++k) {
    double c0 = cpu_now(), t0 = wall_now();
    uint64_t off = 0;
    for (uint64_t b = 0; b < nb; ++b) {
      const uint64_t z = c.encode(exps.data() + (b << kCapBlockLog2), static_cast<uint32_t>(cap_block_len(n, b)),
                                  frame.data() + off);
      index[b] = z;
      off += z;
    }
    r.enc_wall = std::min(r.enc_wall, wall_now() - t0);
    r.enc_cpu = std::min(r.enc_cpu, cpu_now() - c0);
    r.exp_bytes = off;
    std::memset(dec.data(), 0xA5, n);
    c0 = cpu_now();
    t0 = wall_now();
    off = 0;
    for (uint64_t b = 0; b < nb; ++b) {
      c.decode(frame.data() + off, index[b], static_cast<uint32_t>(cap_block_len(n, b)),
               dec.data() + (b << kCapBlockLog2));
      off += index[b];
    }
    r.dec_wall = std::min(r.dec_wall, wall_now() - t0);
    r.dec_cpu = std::min(r.dec_cpu, cpu_now() - c0);
    r.exact = r.exact && std::memcmp(dec.data(), exps.data(), n) == 0;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: coder_alternatives FILE.bf16 REPS\n");
    return 2;
  }
  const int reps = std::atoi(argv[2]);
  std::FILE* fp = std::fopen(argv[1], "rb");
  if (!fp) return 1;
  std::fseek(fp, 0, SEEK_END);
  const uint64_t bytes = static_cast<uint64_t>(std::ftell(fp)) / 2 * 2;
  std::fseek(fp, 0, SEEK_SET);
  std::vector<uint8_t> in(bytes);
  if (std::fread(in.data(), 1, bytes, fp) != bytes) return 1;
  std::fclose(fp);
  const uint64_t n = bytes / 2;
  std::vector<uint8_t> exps(n);
  for (uint64_t i = 0; i < n; ++i) exps[i] = static_cast<uint8_t>((load16(in.data() + 2 * i) >> 7) & 0xFF);
  in = {};

  const uint64_t nb = cap_blocks(n);
  auto ratio = [&](double exp_bytes) { return double(bytes) / (64.0 + double(n) + exp_bytes + 4.0 * nb); };
  double h0_bits = 0;
  uint64_t huff_table = 0, rans_table = 0;  // table bytes, all blocks
  for (uint64_t b = 0; b < nb; ++b) {
    const uint32_t m = static_cast<uint32_t>(cap_block_len(n, b));
    uint32_t counts[256];
    histogram(exps.data() + (b << kCapBlockLog2), m, counts);
    uint32_t first = 256, last = 0;
    for (uint32_t v = 0; v < 256; ++v)
      if (counts[v]) {
        h0_bits -= counts[v] * std::log2(double(counts[v]) / m);
        first = std::min(first, v);
        last = v;
      }
    huff_table += cap_table_bytes(first, last);
    rans_table += rans_table_bytes(first, last);
  }
  std::printf("{\"file\": \"%s\", \"elements\": %llu, \"blocks\": %llu, \"ratio_h0_block_bound\": %.4f, "
              "\"bits_per_exp_h0_block\": %.4f, \"table_bytes_per_block_huffman\": %.1f, "
              "\"table_bytes_per_block_rans\": %.1f}\n",
              argv[1], static_cast<unsigned long long>(n), static_cast<unsigned long long>(nb),
              double(bytes) / (64.0 + double(n) + h0_bits / 8), h0_bits / n, double(huff_table) / nb,
              double(rans_table) / nb);

  // Alternating runs of each coder, best per coder over the rounds.
  std::vector<std::function<Measured()>> coders = {
      [&] { return measure<Huffman<32>>("huffman-32 (format)", exps, 1); },
      [&] { return measure<Huffman<8>>("huffman-8", exps, 1); },
      [&] { return measure<Rans<32>>("rans-32", exps, 1); },
      [&] { return measure<Rans<8>>("rans-8", exps, 1); },
  };
  std::vector<Measured> best(coders.size());
  for (int k = 0; k < reps; ++k)
    for (size_t i = 0; i < coders.size(); ++i) {
      const Measured r = coders[i]();
      Measured& b = best[i];
      if (k == 0) b = r;
      b.enc_wall = std::min(b.enc_wall, r.enc_wall);
      b.dec_wall = std::min(b.dec_wall, r.dec_wall);
      b.enc_cpu = std::min(b.enc_cpu, r.enc_cpu);
      b.dec_cpu = std::min(b.dec_cpu, r.dec_cpu);
      b.exact = b.exact && r.exact && b.exp_bytes == r.exp_bytes;
    }
  for (const Measured& r : best)
    std::printf("{\"coder\": \"%s\", \"exp_bytes\": %llu, \"bits_per_exp\": %.4f, \"ratio\": %.4f, "
                "\"encode_gbps\": %.3f, \"decode_gbps\": %.3f, \"encode_gbps_per_cpu_s\": %.3f, "
                "\"decode_gbps_per_cpu_s\": %.3f, \"exact\": %s}\n",
                r.name.c_str(), static_cast<unsigned long long>(r.exp_bytes), 8.0 * r.exp_bytes / n,
                ratio(double(r.exp_bytes)), bytes / r.enc_wall / 1e9, bytes / r.dec_wall / 1e9,
                bytes / r.enc_cpu / 1e9, bytes / r.dec_cpu / 1e9, r.exact ? "true" : "false");
  bool ok = true;
  for (const Measured& r : best) ok = ok && r.exact;
  return ok ? 0 : 1;
}
