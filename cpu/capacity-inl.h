/* SPDX-License-Identifier: Apache-2.0 */
// Per-target kernels of the capacity decoder (cpu/capacity_codec.cpp): the
// exponents come out of the Huffman decoder stream by stream (row s holds
// the codes of elements s, s + 32, s + 64, ...); these put them back in
// element order with 16x16 byte transposes, and for bf16 join them with the
// residual bytes in the same pass. AVX-512 and AVX2 transpose 512/256-bit
// rows (64/32 indices per load) and write each index's 32 values as one
// whole 64-byte line; other targets and the tail use 128-bit tiles. fp16
// and fp32 join the transposed exponents in a second vector pass. The
// AVX-512 and AVX2 bf16 joins can also hash their lines (XXH3 stripes) into
// the frame's 64 KiB block checksums as they write them.
#if defined(SPLITZIP_CPU_CAPACITY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_CAPACITY_INL_H_
#undef SPLITZIP_CPU_CAPACITY_INL_H_
#else
#define SPLITZIP_CPU_CAPACITY_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "core/dtype_traits.h"
#include "core/residual.h"
#include "cpu/kernels.h"
#include "cpu/simd-inl.h"
#include "cpu/xxh3-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

constexpr uint32_t kCapRows = 32;  // streams per block (FORMAT.md 4.6.2)

// ---- Huffman decode of the 32 streams into rows (scalar; compiled per
// target for BMI2's shifts) ----

HWY_INLINE uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// One stream's reader: a 64-bit bit buffer refilled without branches (at
// least 56 valid bits after a refill, enough for four lookups of <= 12).
// The next load's address is known a round ahead, so the load is off the
// lookups' dependency chain. The output pointer and the bit count share one
// register, z = 64 * out + u (out: the next code's offset from the rows'
// base, u = 64 - valid bits, 1..63): a lookup adds
// its entry >> 24 whole (bits + 64 * codes), one add for both, and a lane
// needs three registers, so four lanes' buffers and z, the table and the
// rows fit in the 15 (GCC keeps the load pointers, the round count and
// the prefetch cursors, each used once a round, on the stack).
struct Lane {
  uint64_t buf;
  const uint8_t* p;  // next byte to load
  uint64_t z;        // 64 * (the next code's offset from the rows' base) + 64 - valid bits
  uint64_t out() const { return z >> 6; }
  uint64_t bits() const { return 64 - (z & 63); }
  // Starts with 56 valid bits (the loaded bits above them are loaded again).
  HWY_INLINE void start(const uint8_t* base, uint64_t row) {
    buf = Load64(base);
    p = base + 7;
    z = 64 * row + 8;
  }
  HWY_INLINE void refill() {
    const uint64_t u = z & 63;
    buf |= Load64(p) << ((0 - z) & 63);  // << valid bits
    const uint64_t adv = (u - 1) >> 3;    // whole bytes below 64 valid bits
    p += adv;
    z -= 8 * adv;
  }
  // Up to three codes (multi-code entry: symbols, bits << 24, codes << 30).
  // The shift comes from the byte table (its entry >> 24), a load beside
  // the entry's: the lookup chain is load -> shift, with no extract between.
  // x86 and AArch64 take a 64-bit shift's count mod 64. u stays below 64:
  // <= 8 after a refill, + <= 48 per round.
  HWY_INLINE void step(const CapLookup* lk, uint8_t* rows) {
    const uint64_t x = buf & 4095u;
    const uint32_t e = lk->multi[x];
    const uint32_t sh = lk->steps[x];
    std::memcpy(rows + out(), &e, 4);  // bytes past the codes are rewritten later or row slack
    buf >>= sh & 63;
    z += sh;
  }
  HWY_INLINE void round(const CapLookup* lk, uint8_t* rows) {
    refill();
    for (int q = 0; q < 4; ++q) step(lk, rows);
  }
};

struct LaneLimits {
  const uint8_t* base;
  uint64_t out_end;  // the row's end, from the rows' base
  uint64_t end_bits;
  uint64_t consumed(const Lane& l) const { return 8 * static_cast<uint64_t>(l.p - base) - l.bits(); }
  // Rounds safe from l's state: a round writes <= 12 codes and uses <= 48
  // bits; one may start while the stream's end is not passed, so its loads
  // stay within 16 bytes of the end (a malformed stream cannot run off).
  HWY_INLINE uint64_t safe_rounds(const Lane& l) const {
    const uint64_t c = consumed(l);
    if (c > end_bits) return 0;
    const uint64_t by_out = (out_end - l.out()) / 12;
    const uint64_t by_in = (end_bits - c) / 48 + 1;
    return by_out < by_in ? by_out : by_in;
  }
};

// The rest of one lane: whole rounds until its row is full, the last
// running up to 11 codes into the row's slack; consumed: the bits of the
// row's codes (the codes past its end given back by their lengths). A
// round starts only while the stream's end is not passed, so reads stay
// within 16 bytes of it. False when the stream runs out (malformed).
// (A tail of single codes after the whole rounds was slower: up to 23
// lookups and a mispredicted exit per lane; docs/DESIGN.md, section 4.2.)
HWY_INLINE bool FinishLane(Lane& l, const LaneLimits& lim, const CapLookup* lk, const uint8_t* lens,
                           uint8_t* rows, uint64_t* consumed) {
  while (l.out() < lim.out_end) {
    if (lim.consumed(l) > lim.end_bits) return false;
    l.round(lk, rows);
  }
  uint64_t over = 0;
  for (uint64_t o = lim.out_end; o < l.out(); ++o) over += lens[rows[o]];
  *consumed = lim.consumed(l) - over;
  return true;
}

// Decodes the 32 streams of a block into their rows; consumed[s]: the bits
// stream s used. False when a stream runs out (malformed). Four streams in
// lockstep (independent dependency chains), in runs of rounds safe for all.
// Reads up to 16 bytes past each stream's end. Each round also prefetches
// one line of each of pf's ranges (kernels.h).
// kSet: a table set's block (FORMAT.md 4.9): stream s uses lookups
// lk[s & mask] and lengths lens[256 * (s & mask)]; else one table for all.
template <bool kSet>
HWY_INLINE bool DecodeRowsImpl(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint32_t mask,
                               uint64_t* consumed, CapPrefetch* pf) {
  bool ok = true;
  const uint8_t *p0 = pf->at[0], *e0 = pf->end[0], *p1 = pf->at[1], *e1 = pf->end[1];
  // Output places as offsets from the lowest row (no pointer kept as an
  // integer): one base register for all lanes.
  uint8_t* rows = in[0].row;
  for (uint32_t s = 1; s < kCapRows; ++s) rows = in[s].row < rows ? in[s].row : rows;
  for (uint32_t s0 = 0; s0 < kCapRows; s0 += 4) {
    Lane l[4];
    LaneLimits lim[4];
    for (int i = 0; i < 4; ++i) {
      const CapStreamIn& x = in[s0 + i];
      const auto row = static_cast<uint64_t>(x.row - rows);
      l[i].start(x.base, row);
      lim[i] = {x.base, row + x.len, x.end_bits};
    }
    Lane a = l[0], b = l[1], c = l[2], d = l[3];
    const CapLookup* la = kSet ? lk + ((s0 + 0) & mask) : lk;
    const CapLookup* lb = kSet ? lk + ((s0 + 1) & mask) : lk;
    const CapLookup* lc = kSet ? lk + ((s0 + 2) & mask) : lk;
    const CapLookup* ld = kSet ? lk + ((s0 + 3) & mask) : lk;
    for (;;) {
      uint64_t k = HWY_MIN(HWY_MIN(lim[0].safe_rounds(a), lim[1].safe_rounds(b)),
                           HWY_MIN(lim[2].safe_rounds(c), lim[3].safe_rounds(d)));
      if (k < 2) break;
      for (; k > 0; --k) {
        hwy::Prefetch(p0);
        p0 += p0 < e0 ? 64 : 0;
        hwy::Prefetch(p1);
        p1 += p1 < e1 ? 64 : 0;
        a.refill();
        b.refill();
        c.refill();
        d.refill();
        for (int q = 0; q < 4; ++q) {
          a.step(la, rows);
          b.step(lb, rows);
          c.step(lc, rows);
          d.step(ld, rows);
        }
      }
    }
    ok &= FinishLane(a, lim[0], la, kSet ? lens + 256 * ((s0 + 0) & mask) : lens, rows, consumed + s0);
    ok &= FinishLane(b, lim[1], lb, kSet ? lens + 256 * ((s0 + 1) & mask) : lens, rows, consumed + s0 + 1);
    ok &= FinishLane(c, lim[2], lc, kSet ? lens + 256 * ((s0 + 2) & mask) : lens, rows, consumed + s0 + 2);
    ok &= FinishLane(d, lim[3], ld, kSet ? lens + 256 * ((s0 + 3) & mask) : lens, rows, consumed + s0 + 3);
  }
  pf->at[0] = p0;
  pf->at[1] = p1;
  return ok;
}

bool CapDecodeRows(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint64_t* consumed,
                   CapPrefetch* pf) {
  return DecodeRowsImpl<false>(in, lk, lens, 0, consumed, pf);
}

bool CapDecodeRowsSet(const CapStreamIn* in, const CapLookup* lk, const uint8_t* lens, uint32_t mask,
                      uint64_t* consumed, CapPrefetch* pf) {
  return DecodeRowsImpl<true>(in, lk, lens, mask, consumed, pf);
}

// ---- fp16 / fp32: exponents (element order) joined with the residuals ----

// Elements [j0, count) one at a time (the vector loops' tails; HWY_SCALAR).
HWY_INLINE void JoinFp16Tail(const uint8_t* exps, uint32_t j0, uint32_t count, const uint8_t* res,
                             const uint8_t* high, uint8_t* out) {
  for (uint32_t i = j0; i < count; ++i) {
    const uint16_t v = Fp16Traits::join(exps[i], load_residual<Fp16Traits>(res, high, i));
    std::memcpy(out + 2 * uint64_t{i}, &v, 2);
  }
}

HWY_INLINE void JoinFp32Tail(const uint8_t* exps, uint32_t j0, uint32_t count, const uint8_t* res, uint8_t* out) {
  for (uint32_t i = j0; i < count; ++i) {
    const uint32_t v = Fp32Traits::join(exps[i], load_res_bytes<Fp32Traits>(res, i));
    std::memcpy(out + 4 * uint64_t{i}, &v, 4);
  }
}

HWY_INLINE void JoinE5m2Tail(const uint8_t* exps, uint32_t j0, uint32_t count, const uint8_t* high, uint8_t* out) {
  for (uint32_t i = j0; i < count; ++i)
    out[i] = Fp8E5M2Traits::join(exps[i], load_residual<Fp8E5M2Traits>(nullptr, high, i));
}

#if HWY_TARGET != HWY_SCALAR
// fp16 high bytes (fp8_e5m2 bytes) of elements j.. in element order:
// sign | exponent << 2 | two mantissa bits, from the exponents and the
// packed 3-bit parts (LoadBlocks<6> reads 16 bytes per 128-bit block).
HWY_INLINE V8 JoinHighBytes(const uint8_t* exps, const uint8_t* high, uint32_t j) {
  const D8 d8;
  const D16 d16;
  const V8 r3 = Unpack3(LoadBlocks<6>(d8, high + 3 * j / 8));
  const V8 e = hn::LoadU(d8, exps + j);
  // e < 32 and r3 < 8: the 16-bit shifts move no bit into the next byte.
  const V8 sign = hn::And(hn::BitCast(d8, hn::ShiftLeft<5>(hn::BitCast(d16, r3))), hn::Set(d8, 0x80));
  const V8 e2 = hn::BitCast(d8, hn::ShiftLeft<2>(hn::BitCast(d16, e)));
  return hn::Or(hn::Or(sign, e2), hn::And(r3, hn::Set(d8, 3)));
}

// fp16: low byte = residual byte; high byte = sign | exponent << 2 | two
// mantissa bits (sign and mantissa bits from the 3-bit part, unpacked as in
// the fast mode's decoder). Vectors while their 3-bit loads stay below
// high_end (LoadBlocks<6> reads 16 bytes per 128-bit block).
template <bool kStream>
HWY_INLINE uint32_t JoinFp16Vec(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* high,
                                const uint8_t* high_end, uint8_t* out) {
  const D8 d8;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(d8));
  const ZipOrder zip;
  uint32_t j = 0;
  for (; j + N <= count && high + 3 * j / 8 + 6 * (kBlocks - 1) + 16 <= high_end; j += N) {
    const V8 hi = zip(JoinHighBytes(exps, high, j));
    const V8 lo = zip(hn::LoadU(d8, res + j));
    StoreOut<kStream>(hn::InterleaveLower(d8, lo, hi), out + 2 * uint64_t{j});
    StoreOut<kStream>(hn::InterleaveUpper(d8, lo, hi), out + 2 * uint64_t{j} + N);
  }
  return j;
}

// fp32: per u32 lane residual bytes 0, 1, 2 and byte 2 again (its bit 7,
// the sign, kept at bit 31 by the mask), | exponent << 23. Vectors while
// their residual loads (16 bytes at 12-byte steps) stay below res_end.
template <bool kStream>
HWY_INLINE uint32_t JoinFp32Vec(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* res_end,
                                uint8_t* out) {
  const D8 d8;
  const D32 d32;
  const hn::Rebind<uint8_t, D32> dq;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(d32));
  alignas(16) static constexpr uint8_t kSpread[16] = {0, 1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 11};
  const V8 spread = hn::LoadDup128(d8, kSpread);
  uint32_t j = 0;
  for (; j + N <= count && res + 3 * uint64_t{j + N} + 4 <= res_end; j += N) {
    const V8 rb = LoadBlocks<12>(d8, res + 3 * uint64_t{j});
    const auto r = hn::And(hn::BitCast(d32, hn::TableLookupBytes(rb, spread)), hn::Set(d32, 0x807FFFFFu));
    const auto v = hn::Or(r, hn::ShiftLeft<23>(hn::PromoteTo(d32, hn::LoadU(dq, exps + j))));
    StoreOut<kStream>(hn::BitCast(d8, v), out + 4 * uint64_t{j});
  }
  return j;
}

// fp8_e5m2: the byte is fp16's high byte above, in element order.
template <bool kStream>
HWY_INLINE uint32_t JoinE5m2Vec(const uint8_t* exps, uint32_t count, const uint8_t* high, const uint8_t* high_end,
                                uint8_t* out) {
  const D8 d8;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(d8));
  uint32_t j = 0;
  for (; j + N <= count && high + 3 * j / 8 + 6 * (kBlocks - 1) + 16 <= high_end; j += N)
    StoreOut<kStream>(JoinHighBytes(exps, high, j), out + j);
  return j;
}

void CapJoinE5m2(const uint8_t* exps, uint32_t count, const uint8_t* high, const uint8_t* high_end, uint8_t* out,
                 bool stream) {
  const uint32_t j = stream && (reinterpret_cast<uintptr_t>(out) & 15) == 0
                         ? JoinE5m2Vec<true>(exps, count, high, high_end, out)
                         : JoinE5m2Vec<false>(exps, count, high, high_end, out);
  JoinE5m2Tail(exps, j, count, high, out);
}

void CapJoinFp16(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* high,
                 const uint8_t* high_end, uint8_t* out, bool stream) {
  const uint32_t j = stream && (reinterpret_cast<uintptr_t>(out) & 15) == 0
                         ? JoinFp16Vec<true>(exps, count, res, high, high_end, out)
                         : JoinFp16Vec<false>(exps, count, res, high, high_end, out);
  JoinFp16Tail(exps, j, count, res, high, out);
}

void CapJoinFp32(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* res_end, uint8_t* out,
                 bool stream) {
  const uint32_t j = stream && (reinterpret_cast<uintptr_t>(out) & 15) == 0
                         ? JoinFp32Vec<true>(exps, count, res, res_end, out)
                         : JoinFp32Vec<false>(exps, count, res, res_end, out);
  JoinFp32Tail(exps, j, count, res, out);
}
#else
void CapJoinFp16(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t* high, const uint8_t*,
                 uint8_t* out, bool) {
  JoinFp16Tail(exps, 0, count, res, high, out);
}
void CapJoinFp32(const uint8_t* exps, uint32_t count, const uint8_t* res, const uint8_t*, uint8_t* out, bool) {
  JoinFp32Tail(exps, 0, count, res, out);
}
void CapJoinE5m2(const uint8_t* exps, uint32_t count, const uint8_t* high, const uint8_t*, uint8_t* out, bool) {
  JoinE5m2Tail(exps, 0, count, high, out);
}
#endif

#if HWY_TARGET != HWY_SCALAR
namespace hn = hwy::HWY_NAMESPACE;
using T8 = hn::Full128<uint8_t>;
using T16 = hn::Full128<uint16_t>;
using T32 = hn::Full128<uint32_t>;
using T64 = hn::Full128<uint64_t>;
using W8 = hn::Vec<T8>;

// One interleave stage over 16 vectors: pairs (2k, 2k+1) hold neighbouring
// stream groups for the same indices; the lower halves of the index range go
// to k, the upper to k + 8.
template <class DL>
HWY_INLINE void Stage(W8* v) {
  const T8 d8;
  const DL dl;
  W8 o[16];
  for (int k = 0; k < 8; ++k) {
    const auto a = hn::BitCast(dl, v[2 * k]), b = hn::BitCast(dl, v[2 * k + 1]);
    o[k] = hn::BitCast(d8, hn::InterleaveLower(dl, a, b));
    o[k + 8] = hn::BitCast(d8, hn::InterleaveUpper(dl, a, b));
  }
  for (int k = 0; k < 16; ++k) v[k] = o[k];
}

// 16 rows (streams s0..s0+15) x 16 indices (i..i+15) -> v[e] = the 16
// streams of index i + bitrev4(e).
HWY_INLINE void Transpose16(const uint8_t* rows, size_t stride, W8* v) {
  const T8 d8;
  for (int s = 0; s < 16; ++s) v[s] = hn::LoadU(d8, rows + s * stride);
  Stage<T8>(v);
  Stage<T16>(v);
  Stage<T32>(v);
  Stage<T64>(v);
}

constexpr int kBitrev4[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};

// Indices [0, n16) of every row (n16 a multiple of 16) into exps in element
// order: exps[i * 32 + s] = rows[s * stride + i].
void CapTranspose(const uint8_t* rows, size_t stride, uint32_t n16, uint8_t* exps) {
  const T8 d8;
  W8 v[16];
  for (uint32_t i = 0; i < n16; i += 16)
    for (uint32_t g = 0; g < kCapRows; g += 16) {
      Transpose16(rows + g * stride + i, stride, v);
      for (int e = 0; e < 16; ++e) hn::StoreU(v[e], d8, exps + (i + kBitrev4[e]) * kCapRows + g);
    }
}

// bf16: the same, joined with the residual bytes (sign << 7 | mantissa) into
// the values: low byte = mantissa | exponent bit 0 << 7, high byte = sign |
// exponent >> 1. kStream: non-temporal stores (out 16-byte aligned).
template <bool kStream>
HWY_INLINE void JoinBf16(const uint8_t* rows, size_t stride, uint32_t i0, uint32_t n16, const uint8_t* res,
                         uint8_t* out) {
  const T8 d8;
  const T16 d16;
  const W8 k7f = hn::Set(d8, 0x7F);
  W8 v[16];
  for (uint32_t i = i0; i < n16; i += 16)
    for (uint32_t g = 0; g < kCapRows; g += 16) {
      Transpose16(rows + g * stride + i, stride, v);
      for (int e = 0; e < 16; ++e) {
        const uint64_t j = uint64_t{i + kBitrev4[e]} * kCapRows + g;  // first element of the tile
        const W8 r = hn::LoadU(d8, res + j);
        const W8 x = v[e];
        // Bit selects (0x7F from the first operand): x << 7 in 16-bit lanes
        // puts each byte's bit 0 at its bit 7.
        const W8 lo = hn::Or(hn::And(k7f, r), hn::AndNot(k7f, hn::BitCast(d8, hn::ShiftLeft<7>(hn::BitCast(d16, x)))));
        const W8 hi = hn::Or(hn::And(k7f, hn::ShiftRight<1>(x)), hn::AndNot(k7f, r));
        const W8 w0 = hn::BitCast(d8, hn::ZipLower(d16, lo, hi)), w1 = hn::BitCast(d8, hn::ZipUpper(d16, lo, hi));
        if (kStream) {
          hn::Stream(w0, d8, out + 2 * j);
          hn::Stream(w1, d8, out + 2 * j + 16);
        } else {
          hn::StoreU(w0, d8, out + 2 * j);
          hn::StoreU(w1, d8, out + 2 * j + 16);
        }
      }
    }
  if (kStream) hwy::FlushStream();
}

// Transpose16 on vectors of any width: 16 rows of Lanes(d8) indices; v[e]
// holds in its 128-bit block L the 16 streams of index i + 16 L + bitrev4(e).
template <class D8>
HWY_INLINE void TransposeRows(D8 d8, const uint8_t* rows, size_t stride, hn::Vec<D8>* v) {
  using V8 = hn::Vec<D8>;
  const hn::Repartition<uint16_t, D8> d16;
  const hn::Repartition<uint32_t, D8> d32;
  const hn::Repartition<uint64_t, D8> d64;
  for (int s = 0; s < 16; ++s) v[s] = hn::LoadU(d8, rows + s * stride);
  auto stage = [&](auto dl) {
    V8 o[16];
    for (int k = 0; k < 8; ++k) {
      const auto a = hn::BitCast(dl, v[2 * k]), b = hn::BitCast(dl, v[2 * k + 1]);
      o[k] = hn::BitCast(d8, hn::InterleaveLower(dl, a, b));
      o[k + 8] = hn::BitCast(d8, hn::InterleaveUpper(dl, a, b));
    }
    for (int k = 0; k < 16; ++k) v[k] = o[k];
  };
  stage(d8);
  stage(d16);
  stage(d32);
  stage(d64);
}

#if HWY_ARCH_X86 && (HWY_TARGET <= HWY_AVX3 || HWY_TARGET == HWY_AVX2)
// Secret words of a checksum block's 64th KiB: 15 stripes as every 1 KiB
// block's, the last one (bytes [65472, 65536)) with the secret at 121
// (kXxh3.last), used directly instead of a correction afterwards.
struct LastKiBKey {
  uint64_t w[128];
};
constexpr LastKiBKey MakeLastKiBKey() {
  LastKiBKey k{};
  for (uint32_t w = 0; w < 128; ++w) k.w[w] = w < 120 ? kXxh3.key[w] : kXxh3.last[w - 120];
  return k;
}
alignas(64) static constexpr LastKiBKey kLastKiBKey = MakeLastKiBKey();

// A join's lines are XXH3 stripes (FORMAT.md 4.5): within a 1 KiB block
// the stripes' terms are plain sums mod 2^64, so a join that writes the
// lines out of order keeps, per 1 KiB, the sum of the products
// lo32(k) * hi32(k) (k = words ^ key) and the sum of the words, and folds
// them into the running accumulators (words with their pairs swapped:
// acc[i ^ 1] += w[i]) once per 1 KiB.
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// AVX-512: the same transpose on 512-bit vectors (one row load = 64
// indices), so that each join step writes whole 64-byte lines (one index's
// 32 elements). Transpose16 on 16 rows leaves v[e] with the 16 streams of
// index i + 16 * L + bitrev4(e) in 128-bit block L; the blocks of the two
// stream halves are then paired (vpermt2q) into whole indices.
using T8w = hn::Full512<uint8_t>;
using W8w = hn::Vec<T8w>;
constexpr uint32_t kGroupIndices = 64;  // indices (64-byte lines) a JoinGroup writes
constexpr uintptr_t kStoreAlign = 64;   // the alignment its non-temporal stores need


// A group's XXH3 terms (64 lines = four 1 KiB blocks: lines [16 q, 16 q +
// 16) are block q's 16 stripes): per block, the sums of the products and of
// the words. key3: block 3's secret words (the 64th KiB's at a checksum
// block's last group); blocks 0-2 take kXxh3.key.
struct GroupTerms {
  __m512i prod[4], words[4];
  const uint64_t* key3;
};

HWY_INLINE void HashLine512(__m512i w, const uint64_t* key, __m512i* prod, __m512i* words) {
  const __m512i k = _mm512_xor_si512(w, _mm512_load_si512(key));
  *prod = _mm512_add_epi64(*prod, _mm512_mul_epu32(k, _mm512_srli_epi64(k, 32)));
  *words = _mm512_add_epi64(*words, w);
}

// Two indices' 64 values: e = [x: streams 0-15, 16-31 | x+16: 0-15, 16-31]
// joined with their residuals (res at index x) into lines x and x + 16 (o0,
// o1). kStream: non-temporal stores (o0, o1 64-byte aligned). kHash: line x
// is stripe x of block q of the group, line x + 16 of block q + 1.
template <bool kStream, bool kHash = false>
HWY_INLINE void JoinLines(__m512i e, const uint8_t* res, uint8_t* o0, uint8_t* o1, __m512i k7f, __m512i lo_idx,
                          __m512i hi_idx, GroupTerms* g = nullptr, int q = 0, uint32_t x = 0) {
  const __m256i r0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(res));
  const __m256i r1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(res + 16 * kCapRows));
  const __m512i r = _mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1);
  // Bit selects (0xCA: k ? b : c per bit, k = 0x7F): as JoinBf16.
  const __m512i lo = _mm512_ternarylogic_epi32(k7f, r, _mm512_slli_epi16(e, 7), 0xCA);
  const __m512i hi = _mm512_ternarylogic_epi32(k7f, _mm512_srli_epi16(e, 1), r, 0xCA);
  const __m512i il = _mm512_unpacklo_epi8(lo, hi), iu = _mm512_unpackhi_epi8(lo, hi);
  const __m512i w0 = _mm512_permutex2var_epi64(il, lo_idx, iu), w1 = _mm512_permutex2var_epi64(il, hi_idx, iu);
  if constexpr (kHash) {
    HashLine512(w0, kXxh3.key + 8 * x, &g->prod[q], &g->words[q]);
    HashLine512(w1, (q + 1 == 3 ? g->key3 : kXxh3.key) + 8 * x, &g->prod[q + 1], &g->words[q + 1]);
  }
  if (kStream) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(o0), w0);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(o1), w1);
  } else {
    _mm512_storeu_si512(o0, w0);
    _mm512_storeu_si512(o1, w1);
  }
}

// The 64 lines of indices [i, i + 64) (4 KiB) at o: o[64 * (x - i)] = line x.
// kHash: their XXH3 terms in g.
template <bool kStream, bool kHash = false>
HWY_INLINE void JoinGroup(const uint8_t* rows, size_t stride, uint32_t i, const uint8_t* res, uint8_t* o,
                          GroupTerms* g = nullptr) {
  const T8w d8;
  const __m512i k7f = _mm512_set1_epi8(0x7F);
  // 128-bit blocks: {a0, b0, a1, b1} and {a2, b2, a3, b3}.
  const __m512i lo_idx = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  const __m512i hi_idx = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  W8w a[16], b[16];
  TransposeRows(d8, rows + i, stride, a);
  TransposeRows(d8, rows + 16 * stride + i, stride, b);
  if constexpr (kHash) {
    for (int q = 0; q < 4; ++q) g->prod[q] = g->words[q] = _mm512_setzero_si512();
  }
  for (int e = 0; e < 16; ++e) {
    const uint32_t x = kBitrev4[e];  // relative to i
    const __m512i e0 = _mm512_permutex2var_epi64(a[e].raw, lo_idx, b[e].raw);  // x, x + 16
    const __m512i e1 = _mm512_permutex2var_epi64(a[e].raw, hi_idx, b[e].raw);  // x + 32, x + 48
    const uint8_t* r = res + uint64_t{i + x} * kCapRows;
    uint8_t* ox = o + 64 * x;
    JoinLines<kStream, kHash>(e0, r, ox, ox + 64 * 16, k7f, lo_idx, hi_idx, g, 0, x);
    JoinLines<kStream, kHash>(e1, r + 32 * kCapRows, ox + 64 * 32, ox + 64 * 48, k7f, lo_idx, hi_idx, g, 2, x);
  }
}

// XXH3-64 of whole checksum blocks, group by group (16 groups of four
// 1 KiB blocks per 64 KiB): each block's terms, then a scramble, or at a
// checksum block's 64th KiB the merge.
struct GroupXxh3 {
  FusedXxh3 h;  // its accumulator, Reset and Scramble
  uint32_t g = 0;  // groups of the current checksum block so far
  uint64_t block = 0;  // the current checksum block (hash slot)
  uint64_t bytes;      // of each checksum block (the frame's last may be shorter)
  uint32_t groups;     // groups per checksum block

  GroupXxh3(uint64_t* hashes, uint64_t block_bytes)
      : h(hashes), bytes(block_bytes), groups(static_cast<uint32_t>(block_bytes / 4096)) {}
  static constexpr uint64_t kGroupBytes = 4096;
  HWY_INLINE void Keys(GroupTerms* t) const { t->key3 = g == groups - 1 ? kLastKiBKey.w : kXxh3.key; }
  HWY_INLINE void Fold(const GroupTerms& t) {
    for (int q = 0; q < 4; ++q) {
      const __m512i sum = _mm512_add_epi64(t.prod[q], _mm512_shuffle_epi32(t.words[q], _MM_PERM_BADC));
      h.acc[0] = hn::Add(h.acc[0], FusedXxh3::V64{sum});
      if (q < 3 || g < groups - 1) h.Scramble();
    }
    if (++g < groups) return;
    dev::Xxh3Acc a;
    hn::StoreU(h.acc[0], D64(), a.a);
    h.hashes[block++] = a.merge(bytes);
    h.Reset();
    g = 0;
  }
};
static_assert(FusedXxh3::kAcc == 1, "AVX-512: one accumulator vector per stripe");

// A group's 4 KiB of lines from an L1 buffer to o (16-byte aligned, not
// 64): aligned 64-byte non-temporal stores, 16-byte ones at the two ends.
HWY_INLINE void StreamGroup(const uint8_t* tmp, uint8_t* o) {
  const size_t head = (64 - (reinterpret_cast<uintptr_t>(o) & 63)) & 63;  // bytes before a 64-byte boundary
  size_t k = 0;
  for (; k < head; k += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(o + k), _mm_load_si128(reinterpret_cast<const __m128i*>(tmp + k)));
  for (; k + 64 <= 64 * 64; k += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(o + k), _mm512_loadu_si512(tmp + k));
  for (; k < 64 * 64; k += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(o + k), _mm_load_si128(reinterpret_cast<const __m128i*>(tmp + k)));
}

#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
// AVX2: as the AVX-512 join with 256-bit vectors (one row load = 32
// indices); the stream halves are paired with vperm2i128 into whole
// indices, and each index's line is written as two 32-byte stores.
using T8w = hn::Full256<uint8_t>;
using W8w = hn::Vec<T8w>;
constexpr uint32_t kGroupIndices = 32;  // indices (64-byte lines) a JoinGroup writes
constexpr uintptr_t kStoreAlign = 32;   // the alignment its non-temporal stores need

// The line's XXH3 terms (FORMAT.md 4.5, as FusedXxh3::Stripe): a line is
// one stripe, key = its 8 secret words; t[0..1] = the running sums of its
// 1 KiB block's products lo32(k) * hi32(k) (words 0-3, 4-7), t[2..3] of its
// words, whose pairs are swapped once per 1 KiB (acc[i ^ 1] += w[i]).
HWY_INLINE void HashLine(__m256i w0, __m256i w1, const uint64_t* key, __m256i* t) {
  const __m256i k0 = _mm256_xor_si256(w0, _mm256_load_si256(reinterpret_cast<const __m256i*>(key)));
  const __m256i k1 = _mm256_xor_si256(w1, _mm256_load_si256(reinterpret_cast<const __m256i*>(key + 4)));
  t[0] = _mm256_add_epi64(t[0], _mm256_mul_epu32(k0, _mm256_srli_epi64(k0, 32)));
  t[1] = _mm256_add_epi64(t[1], _mm256_mul_epu32(k1, _mm256_srli_epi64(k1, 32)));
  t[2] = _mm256_add_epi64(t[2], w0);
  t[3] = _mm256_add_epi64(t[3], w1);
}

// Line x (o) from one index's 32 exponents (streams in order) and residuals.
// kHash: its stripe terms added to t (key: its secret words).
template <bool kStream, bool kHash = false>
HWY_INLINE void JoinLine(__m256i e, const uint8_t* res, uint8_t* o, __m256i k7f, const uint64_t* key = nullptr,
                         __m256i* t = nullptr) {
  const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(res));
  const __m256i e7 = _mm256_slli_epi16(e, 7), e1 = _mm256_srli_epi16(e, 1);
  const __m256i lo = _mm256_or_si256(_mm256_and_si256(k7f, r), _mm256_andnot_si256(k7f, e7));
  const __m256i hi = _mm256_or_si256(_mm256_and_si256(k7f, e1), _mm256_andnot_si256(k7f, r));
  const __m256i il = _mm256_unpacklo_epi8(lo, hi), iu = _mm256_unpackhi_epi8(lo, hi);
  const __m256i w0 = _mm256_permute2x128_si256(il, iu, 0x20), w1 = _mm256_permute2x128_si256(il, iu, 0x31);
  if constexpr (kHash) HashLine(w0, w1, key, t);
  if (kStream) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(o), w0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(o + 32), w1);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), w0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 32), w1);
  }
}

// A group's XXH3 terms: lines [0, 16) and [16, 32) are the 16 stripes of
// two 1 KiB blocks (stripe x = line x, x + 16), summed per half: within a
// 1 KiB block the stripes' terms are plain sums mod 2^64, so the lines'
// bit-reversed order does not matter. key[h]: half h's secret words by word
// in its 1 KiB.
struct GroupTerms {
  __m256i t[2][4];  // per half: HashLine's sums
  const uint64_t* key[2];
};

// The 32 lines of indices [i, i + 32) (2 KiB) at o; kHash: their terms in g.
template <bool kStream, bool kHash = false>
HWY_INLINE void JoinGroup(const uint8_t* rows, size_t stride, uint32_t i, const uint8_t* res, uint8_t* o,
                          GroupTerms* g = nullptr) {
  const T8w d8;
  const __m256i k7f = _mm256_set1_epi8(0x7F);
  W8w a[16], b[16];
  TransposeRows(d8, rows + i, stride, a);
  TransposeRows(d8, rows + 16 * stride + i, stride, b);
  if constexpr (kHash) {
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 4; ++q) g->t[h][q] = _mm256_setzero_si256();
  }
  for (int e = 0; e < 16; ++e) {
    const uint32_t x = kBitrev4[e];  // relative to i
    const __m256i e0 = _mm256_permute2x128_si256(a[e].raw, b[e].raw, 0x20);  // x
    const __m256i e1 = _mm256_permute2x128_si256(a[e].raw, b[e].raw, 0x31);  // x + 16
    const uint8_t* r = res + uint64_t{i + x} * kCapRows;
    if constexpr (kHash) {
      JoinLine<kStream, true>(e0, r, o + 64 * x, k7f, g->key[0] + 8 * x, g->t[0]);
      JoinLine<kStream, true>(e1, r + 16 * kCapRows, o + 64 * (x + 16), k7f, g->key[1] + 8 * x, g->t[1]);
    } else {
      JoinLine<kStream>(e0, r, o + 64 * x, k7f);
      JoinLine<kStream>(e1, r + 16 * kCapRows, o + 64 * (x + 16), k7f);
    }
  }
}

// XXH3-64 of whole checksum blocks, group by group (32 groups per 64 KiB):
// the running accumulators get half 0's terms, a scramble, half 1's terms,
// then a scramble, or at a checksum block's last group the merge.
struct GroupXxh3 {
  FusedXxh3 h;  // its accumulators, Reset and Scramble
  uint32_t g = 0;  // groups of the current checksum block so far
  uint64_t block = 0;  // the current checksum block (hash slot)
  uint64_t bytes;      // of each checksum block (the frame's last may be shorter)
  uint32_t groups;     // groups per checksum block

  GroupXxh3(uint64_t* hashes, uint64_t block_bytes)
      : h(hashes), bytes(block_bytes), groups(static_cast<uint32_t>(block_bytes / 2048)) {}
  static constexpr uint64_t kGroupBytes = 2048;
  HWY_INLINE void Keys(GroupTerms* t) const {
    t->key[0] = kXxh3.key;
    t->key[1] = g == groups - 1 ? kLastKiBKey.w : kXxh3.key;
  }
  HWY_INLINE void Add(const __m256i* t) {
    for (int q = 0; q < 2; ++q)
      h.acc[q] = hn::Add(h.acc[q], FusedXxh3::V64{_mm256_add_epi64(t[q], _mm256_shuffle_epi32(t[2 + q], 0x4E))});
  }
  HWY_INLINE void Fold(const GroupTerms& t) {
    Add(t.t[0]);
    h.Scramble();
    Add(t.t[1]);
    if (++g < groups) {
      h.Scramble();
      return;
    }
    dev::Xxh3Acc a;
    for (size_t q = 0; q < 2; ++q) hn::StoreU(h.acc[q], D64(), a.a + 4 * q);
    h.hashes[block++] = a.merge(bytes);
    h.Reset();
    g = 0;
  }
};
static_assert(FusedXxh3::kAcc == 2, "AVX2: two accumulator vectors per stripe");

// A group's 2 KiB of lines from an L1 buffer to o (16-byte aligned, not
// 32): 32-byte non-temporal stores, 16-byte ones at the two ends.
HWY_INLINE void StreamGroup(const uint8_t* tmp, uint8_t* o) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(o), _mm_load_si128(reinterpret_cast<const __m128i*>(tmp)));
  size_t k = 16;
  for (; k + 32 <= 32 * 64; k += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(o + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tmp + k)));
  _mm_stream_si128(reinterpret_cast<__m128i*>(o + k), _mm_load_si128(reinterpret_cast<const __m128i*>(tmp + k)));
}

#endif

#if HWY_ARCH_X86 && (HWY_TARGET <= HWY_AVX3 || HWY_TARGET == HWY_AVX2)
// The joins on whole groups, shared by the AVX-512 and AVX2 branches above
// (each gives JoinGroup, GroupTerms, GroupXxh3, StreamGroup, kGroupIndices
// and kStoreAlign).

// Indices [0, n) (a multiple of kGroupIndices). stream: non-temporal
// stores, out 16-byte aligned. When out is not kStoreAlign-aligned, each
// group's lines go through an L1 buffer and leave as aligned stores
// (16-byte ones at the group's two ends).
void JoinBf16Wide(const uint8_t* rows, size_t stride, uint32_t n, const uint8_t* res, uint8_t* out, bool stream) {
  if (!stream) {
    for (uint32_t i = 0; i < n; i += kGroupIndices) JoinGroup<false>(rows, stride, i, res, out + 64 * uint64_t{i});
    return;
  }
  if ((reinterpret_cast<uintptr_t>(out) & (kStoreAlign - 1)) == 0) {
    for (uint32_t i = 0; i < n; i += kGroupIndices) JoinGroup<true>(rows, stride, i, res, out + 64 * uint64_t{i});
  } else {
    alignas(64) uint8_t tmp[kGroupIndices * 64];
    for (uint32_t i = 0; i < n; i += kGroupIndices) {
      JoinGroup<false>(rows, stride, i, res, tmp);
      StreamGroup(tmp, out + 64 * uint64_t{i});
    }
  }
  hwy::FlushStream();
}

// Indices [0, n_hash) (whole checksum blocks of block_bytes / 64 indices)
// joined and hashed into hashes[0, n_hash * 64 / block_bytes). kBuffer:
// through an L1 buffer.
template <bool kStream, bool kBuffer>
HWY_INLINE void JoinHashGroups(const uint8_t* rows, size_t stride, uint32_t n_hash, const uint8_t* res, uint8_t* out,
                               uint64_t* hashes, uint64_t block_bytes) {
  GroupXxh3 run(hashes, block_bytes);
  GroupTerms t;
  alignas(64) uint8_t tmp[kBuffer ? kGroupIndices * 64 : 64];
  for (uint32_t i = 0; i < n_hash; i += kGroupIndices) {
    uint8_t* o = out + 64 * uint64_t{i};
    run.Keys(&t);
    if constexpr (kBuffer) {
      JoinGroup<false, true>(rows, stride, i, res, tmp, &t);
      StreamGroup(tmp, o);
    } else {
      JoinGroup<kStream, true>(rows, stride, i, res, o, &t);
    }
    run.Fold(t);
  }
}

void CapTransposeJoinBf16(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res, uint8_t* out,
                          bool stream) {
  const uint32_t n = n16 & ~(kGroupIndices - 1);
  stream = stream && (reinterpret_cast<uintptr_t>(out) & 15) == 0;
  JoinBf16Wide(rows, stride, n, res, out, stream);
  // The indices past the whole groups (fewer than kGroupIndices) in 128-bit tiles.
  if (stream)
    JoinBf16<true>(rows, stride, n, n16, res, out);
  else
    JoinBf16<false>(rows, stride, n, n16, res, out);
}

// The whole checksum blocks of [0, n16) hashed in the join: 1024 indices
// (64 KiB of output) each; with last, the indices past them (the frame's
// last, shorter checksum block: a page) too when they are whole groups;
// the others take the plain join.
uint32_t CapTransposeJoinBf16Hashed(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res,
                                    uint8_t* out, bool stream, uint64_t* hashes, bool last) {
  constexpr uint32_t kPerBlock = static_cast<uint32_t>(kChecksumBlockBytes / 64);  // indices per checksum block
  static_assert(kPerBlock % kGroupIndices == 0, "whole groups per checksum block");
  static_assert(GroupXxh3::kGroupBytes == 64 * kGroupIndices, "a group is a whole number of 1 KiB blocks");
  const uint32_t n_hash = n16 / kPerBlock * kPerBlock, rest = n16 - n_hash;
  stream = stream && (reinterpret_cast<uintptr_t>(out) & 15) == 0;
  const auto run = [&](uint32_t i0, uint32_t n, uint64_t* h, uint64_t block_bytes) {
    const uint64_t e0 = uint64_t{i0} * kCapRows;  // elements
    uint8_t* o = out + 2 * e0;
    if (!stream)
      JoinHashGroups<false, false>(rows + i0, stride, n, res + e0, o, h, block_bytes);
    else if ((reinterpret_cast<uintptr_t>(o) & (kStoreAlign - 1)) == 0)
      JoinHashGroups<true, false>(rows + i0, stride, n, res + e0, o, h, block_bytes);
    else
      JoinHashGroups<false, true>(rows + i0, stride, n, res + e0, o, h, block_bytes);
  };
  run(0, n_hash, hashes, kChecksumBlockBytes);
  if (last && rest != 0 && rest % kGroupIndices == 0) {
    run(n_hash, rest, hashes + n_hash / kPerBlock, uint64_t{rest} * 64);
    if (stream) hwy::FlushStream();
    return n_hash / kPerBlock + 1;
  }
  const uint64_t done = uint64_t{n_hash} * kCapRows;  // elements
  CapTransposeJoinBf16(rows + n_hash, stride, rest, res + done, out + 2 * done, stream);  // flushes
  return n_hash / kPerBlock;
}
#define SPLITZIP_CAP_JOIN_HASHED 1
#else
// Other targets: 128-bit tiles only.
void CapTransposeJoinBf16(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res, uint8_t* out,
                          bool stream) {
  if (stream && (reinterpret_cast<uintptr_t>(out) & 15) == 0)
    JoinBf16<true>(rows, stride, 0, n16, res, out);
  else
    JoinBf16<false>(rows, stride, 0, n16, res, out);
}
#endif

#else  // HWY_SCALAR


void CapTranspose(const uint8_t* rows, size_t stride, uint32_t n16, uint8_t* exps) {
  for (uint32_t i = 0; i < n16; ++i)
    for (uint32_t s = 0; s < kCapRows; ++s) exps[i * kCapRows + s] = rows[s * stride + i];
}

void CapTransposeJoinBf16(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res, uint8_t* out,
                          bool) {
  for (uint32_t i = 0; i < n16; ++i)
    for (uint32_t s = 0; s < kCapRows; ++s) {
      const uint64_t j = uint64_t{i} * kCapRows + s;
      const uint32_t e = rows[s * stride + i], r = res[j];
      out[2 * j] = static_cast<uint8_t>((r & 0x7Fu) | ((e & 1u) << 7));
      out[2 * j + 1] = static_cast<uint8_t>((r & 0x80u) | (e >> 1));
    }
}

#endif  // HWY_TARGET != HWY_SCALAR

#ifndef SPLITZIP_CAP_JOIN_HASHED
// Targets without a fused hash (SSE4, SSSE3, ...): the plain join; the
// caller hashes the output afterwards.
uint32_t CapTransposeJoinBf16Hashed(const uint8_t* rows, size_t stride, uint32_t n16, const uint8_t* res,
                                    uint8_t* out, bool stream, uint64_t*, bool) {
  CapTransposeJoinBf16(rows, stride, n16, res, out, stream);
  return 0;
}
#endif
#undef SPLITZIP_CAP_JOIN_HASHED

// steps[x] = multi[x] >> 24 (the lookups' shift bytes) in vectors, per
// target: a scalar pass compiled for the baseline (SSE2) ran slower after
// the AVX-512 checksum verify, i.e. on every small frame but the first
// (docs/DESIGN.md, section 4.4).
void CapSteps(const uint32_t* multi, uint8_t* steps) {
  const hn::ScalableTag<int32_t> d32;  // the shifted values are < 256: signed demotion is exact
  const hn::Rebind<uint8_t, decltype(d32)> d8;
  const size_t N = hn::Lanes(d32);
  constexpr size_t kWindows = sizeof(CapLookup::steps);
  for (size_t x = 0; x < kWindows; x += N) {
    const auto v = hn::LoadU(hn::RebindToUnsigned<decltype(d32)>(), multi + x);
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(d32, hn::ShiftRight<24>(v))), d8, steps + x);
  }
}

int64_t CapacityTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_CAPACITY_INL_H_
