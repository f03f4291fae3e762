/* SPDX-License-Identifier: Apache-2.0 */
// Capacity-mode encode kernels, compiled once per Highway target
// (cpu/capacity_encode_kernels.cpp):
//  - CapPackRows: a block's 32 bit writers with one u64 vector lane per
//    stream. Per chunk of 64 rows: byte-table lookups (pshufb, one per 16
//    exponent values of the table's span) turn the exponents into 16-bit
//    entries code | len << 12; then, eight rows at a time, each lane joins
//    its stream's codes (four rows, <= 48 bits, twice) with the pending bits
//    into a 128-bit word; the words and the write pointers go to a small
//    buffer, and a scalar loop stores each word with one 16-byte store.
//    Scalar writers (one per stream) were most of the encode.
//  - CapSplitCountBf16 / Fp16 / Fp32: residual parts and exponents, a
//    vector at a time, and their histogram (fused with the split on
//    AVX-512).
// Figures of both, and of the variants not kept: docs/DESIGN.md, section 3.
#if defined(SPLITZIP_CPU_CAPACITY_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_CAPACITY_ENCODE_INL_H_
#undef SPLITZIP_CPU_CAPACITY_ENCODE_INL_H_
#else
#define SPLITZIP_CPU_CAPACITY_ENCODE_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "core/residual.h"
#include "cpu/capacity_encode.h"
#include "cpu/histogram-inl.h"
#include "cpu/simd-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

HWY_INLINE void CapStore64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

// Four streams at a time, their writers in registers: four codes (<= 48
// bits) per 8-byte store.
// mask: a table set's codes (stream s: cl + 256 * (s & mask)); 0: one table.
HWY_INLINE void PackRowsScalar(const uint8_t* exps, uint32_t rows, const uint32_t* cl, CapWriters* w,
                               uint32_t mask = 0) {
  for (uint32_t s0 = 0; s0 < kCapStreams; s0 += 4) {
    uint64_t a[4];
    uint32_t n[4];
    uint8_t* p[4];
    for (uint32_t i = 0; i < 4; ++i) {
      a[i] = w->acc[s0 + i];
      n[i] = w->nb[s0 + i];
      p[i] = w->ptr[s0 + i];
    }
    for (uint32_t r = 0; r < rows; r += 4) {
      const uint8_t* row = exps + r * kCapStreams + s0;
      for (uint32_t q = 0; q < 4; ++q)
        for (uint32_t i = 0; i < 4; ++i) {
          const uint32_t x = cl[256 * ((s0 + i) & mask) + row[q * kCapStreams + i]];
          a[i] |= uint64_t{x & 0xFFFFu} << n[i];
          n[i] += x >> 16;
        }
      for (uint32_t i = 0; i < 4; ++i) {
        CapStore64(p[i], a[i]);
        const uint32_t bytes = n[i] >> 3;  // <= 6
        p[i] += bytes;
        a[i] >>= 8 * bytes;
        n[i] &= 7;
      }
    }
    for (uint32_t i = 0; i < 4; ++i) {
      w->acc[s0 + i] = a[i];
      w->nb[s0 + i] = n[i];
      w->ptr[s0 + i] = p[i];
    }
  }
}

#if HWY_TARGET != HWY_SCALAR

constexpr uint32_t kPackChunkRows = 64;  // rows per lookup pass: entries and words stay in L1
constexpr uint32_t kPackWindowLen = 11;  // codes the byte-table windows must cover (longer: patched)

// 16 u16 entries of one row, zero-extended to u64 lanes.
HWY_INLINE hn::Vec<D64> LoadEntries(const uint16_t* p) {
  const D64 d64;
  const hn::Rebind<uint16_t, D64> d16;
  const hn::Rebind<uint32_t, D64> d32;
  return hn::PromoteTo(d64, hn::PromoteTo(d32, hn::LoadU(d16, p)));
}

// Four rows' codes of N64 streams joined per lane (<= 48 bits), their
// total length to *len.
HWY_INLINE hn::Vec<D64> JoinFour(const uint16_t* row, hn::Vec<D64>* len) {
  const D64 d64;
  const auto code_mask = hn::Set(d64, 0xFFF);
  const auto x0 = LoadEntries(row);
  const auto x1 = LoadEntries(row + kCapStreams);
  const auto x2 = LoadEntries(row + 2 * kCapStreams);
  const auto x3 = LoadEntries(row + 3 * kCapStreams);
  const auto l0 = hn::ShiftRight<12>(x0);
  const auto l01 = hn::Add(l0, hn::ShiftRight<12>(x1));
  const auto l012 = hn::Add(l01, hn::ShiftRight<12>(x2));
  *len = hn::Add(l012, hn::ShiftRight<12>(x3));
  auto w = hn::And(x0, code_mask);
  w = hn::Or(w, hn::Shl(hn::And(x1, code_mask), l0));
  w = hn::Or(w, hn::Shl(hn::And(x2, code_mask), l01));
  return hn::Or(w, hn::Shl(hn::And(x3, code_mask), l012));
}

// kSet: a table set's block (FORMAT.md 4.9), stream s coded with
// cl + 256 * (s & mask): the entries come from a per-stream lookup instead
// of the byte tables (which hold one table).
template <bool kSet>
HWY_INLINE void PackRowsSimd(const uint8_t* exps, uint32_t rows, const uint32_t* cl, uint32_t first,
                             uint32_t last, CapWriters* wr, uint32_t mask) {
  const D8 d8;
  const D16 d16;
  const D64 d64;
  const hn::Half<D8> dh;
  using V64 = hn::Vec<D64>;
  constexpr size_t N8 = hn::MaxLanes(D8());
  constexpr size_t N64 = hn::MaxLanes(D64());
  constexpr size_t kVecs = kCapStreams / N64;  // vectors of stream lanes
  static_assert(kCapStreams % N64 == 0 && (4 * kCapStreams) % N8 == 0, "whole vectors per four rows");
  static_assert(sizeof(uintptr_t) == 8, "write pointers in u64 lanes");

  // kSet: per phase of a row (kCapStreams / N32 vectors of u32 lanes), each
  // lane's table offset 256 * (stream & mask).
  const hn::Repartition<uint32_t, D8> d32;
  const hn::RebindToSigned<decltype(d32)> di32;
  const hn::Rebind<uint8_t, decltype(d32)> d8q;
  const hn::Rebind<uint16_t, decltype(d32)> d16h;
  constexpr size_t N32 = hn::MaxLanes(hn::Repartition<uint32_t, D8>());
  static_assert(kCapStreams % N32 == 0, "whole vectors per row");
  hn::Vec<decltype(d32)> set_off[kCapStreams / N32];
  if (kSet) {
    alignas(64) uint32_t o[kCapStreams];
    for (uint32_t s = 0; s < kCapStreams; ++s) o[s] = 256 * (s & mask);
    for (size_t p = 0; p < kCapStreams / N32; ++p) set_off[p] = hn::LoadU(d32, o + p * N32);
  }
  // Byte tables per 16-value window: low code byte, and code >> 8 | len << 4.
  // The windows cover the codes of at most kPackWindowLen bits when the
  // span is wider than two windows: a set's reach or a block's stray zeros
  // would add windows that every vector pays for; the few values outside
  // them are patched lane by lane (an entry of length 0 marks them).
  bool patch = false;
  if (!kSet && last - first >= 32) {
    uint32_t f = 256, l = 0;
    for (uint32_t e = first; e <= last; ++e)
      if ((cl[e] >> 16) != 0 && (cl[e] >> 16) <= kPackWindowLen) {
        f = e < f ? e : f;
        l = e;
      }
    if (f <= l && (l - f) / 16 < (last - first) / 16) {
      first = f;
      last = l;
      patch = true;
    }
  }
  const uint32_t windows = kSet ? 0 : (last - first) / 16 + 1;
  alignas(16) uint8_t lo_tab[16][16], hi_tab[16][16];
  for (uint32_t w = 0; w < windows; ++w)
    for (uint32_t x = 0; x < 16; ++x) {
      const uint32_t e = first + 16 * w + x;
      const uint32_t v = e <= last ? cl[e] : 0;
      lo_tab[w][x] = static_cast<uint8_t>(v);
      hi_tab[w][x] = static_cast<uint8_t>(((v >> 8) & 0xFu) | ((v >> 16) << 4));
    }
  V8 base[16], lo_lut[16], hi_lut[16];
  for (uint32_t w = 0; w < windows; ++w) {
    base[w] = hn::Set(d8, static_cast<uint8_t>(first + 16 * w));
    lo_lut[w] = hn::LoadDup128(d8, lo_tab[w]);
    hi_lut[w] = hn::LoadDup128(d8, hi_tab[w]);
  }

  V64 acc[kVecs], nb[kVecs], ptr[kVecs];
  {
    alignas(64) uint64_t a[kCapStreams], n[kCapStreams], p[kCapStreams];
    for (uint32_t s = 0; s < kCapStreams; ++s) {
      a[s] = wr->acc[s];
      n[s] = wr->nb[s];
      p[s] = reinterpret_cast<uintptr_t>(wr->ptr[s]);
    }
    for (size_t j = 0; j < kVecs; ++j) {
      acc[j] = hn::Load(d64, a + j * N64);
      nb[j] = hn::Load(d64, n + j * N64);
      ptr[j] = hn::Load(d64, p + j * N64);
    }
  }
  alignas(64) uint16_t ent[kPackChunkRows * kCapStreams];
  alignas(64) uint64_t words[kPackChunkRows / 8 * 2 * kCapStreams];
  alignas(64) uint64_t where[kPackChunkRows / 8 * kCapStreams];
  const V64 low3 = hn::Set(d64, 7);
  const V64 k64 = hn::Set(d64, 64);
  // The interleaved pairs' stream lanes: 0, 2, 4, .. then 1, 3, ..
  alignas(64) uint64_t order[N64];
  for (size_t i = 0; i < N64; ++i) order[i] = i < N64 / 2 ? 2 * i : 2 * (i - N64 / 2) + 1;
  const auto pair_order = hn::SetTableIndices(d64, order);
  for (uint32_t r0 = 0; r0 < rows; r0 += kPackChunkRows) {
    const uint32_t rc = rows - r0 < kPackChunkRows ? rows - r0 : kPackChunkRows;
    const uint8_t* src = exps + size_t{r0} * kCapStreams;
    // Entries code | len << 12, element order.
    if (kSet) {
      // A gather per vector of u32 lanes: index 256 * (stream & mask) + value.
      for (size_t k = 0; k < size_t{rc} * kCapStreams; k += N32) {
        const auto e = hn::PromoteTo(d32, hn::LoadU(d8q, src + k));
        const auto idx = hn::BitCast(di32, hn::Add(e, set_off[(k % kCapStreams) / N32]));
        const auto v = hn::GatherIndex(d32, cl, idx);
        const auto x = hn::Or(hn::And(v, hn::Set(d32, 0xFFFu)), hn::ShiftLeft<12>(hn::ShiftRight<16>(v)));
        hn::StoreU(hn::DemoteTo(d16h, hn::BitCast(di32, x)), d16h, ent + k);  // x < 2^16
      }
    }
    for (size_t k = 0; !kSet && k < size_t{rc} * kCapStreams; k += N8) {
      const V8 e = hn::LoadU(d8, src + k);
      V8 lo = hn::Zero(d8), hi = hn::Zero(d8);
      for (uint32_t w = 0; w < windows; ++w) {
        const V8 idx = WindowIndex(hn::Sub(e, base[w]));
        lo = hn::Or(lo, hn::TableLookupBytesOr0(lo_lut[w], idx));
        hi = hn::Or(hi, hn::TableLookupBytesOr0(hi_lut[w], idx));
      }
      const auto e0 = hn::Or(hn::PromoteTo(d16, hn::LowerHalf(dh, lo)),
                             hn::ShiftLeft<8>(hn::PromoteTo(d16, hn::LowerHalf(dh, hi))));
      const auto e1 = hn::Or(hn::PromoteTo(d16, hn::UpperHalf(dh, lo)),
                             hn::ShiftLeft<8>(hn::PromoteTo(d16, hn::UpperHalf(dh, hi))));
      hn::Store(e0, d16, ent + k);
      hn::Store(e1, d16, ent + k + N8 / 2);
      if (patch) {
        const auto outside = hn::Eq(hi, hn::Zero(d8));
        if (!hn::AllFalse(d8, outside)) {
          uint8_t bits[8] = {};
          hn::StoreMaskBits(d8, outside, bits);
          uint64_t m;
          std::memcpy(&m, bits, 8);
          for (; m != 0; m &= m - 1) {
            const size_t i = static_cast<size_t>(__builtin_ctzll(m));
            const uint32_t x = cl[src[k + i]];
            ent[k + i] = static_cast<uint16_t>((x & 0xFFFu) | ((x >> 16) << 12));
          }
        }
      }
    }
    // Eight rows per step: each stream's codes joined in its lane, four
    // rows (<= 48 bits) at a time, then with the pending bits into a
    // 128-bit word (lo, hi; <= 7 + 96 bits) that leaves as one 16-byte store.
    for (uint32_t g = 0; g < rc; g += 8) {
      const uint16_t* row = ent + size_t{g} * kCapStreams;
      uint64_t* wo = words + size_t{g / 8} * 2 * kCapStreams;
      uint64_t* at = where + size_t{g / 8} * kCapStreams;
      for (size_t j = 0; j < kVecs; ++j) {
        const size_t s0 = j * N64;
        V64 len1, len2;
        const V64 w1 = JoinFour(row + s0, &len1);
        const V64 w2 = JoinFour(row + 4 * kCapStreams + s0, &len2);
        const V64 a = hn::Or(acc[j], hn::Shl(w1, nb[j]));
        const V64 sh = hn::Add(nb[j], len1);  // <= 7 + 48
        const V64 lo = hn::Or(a, hn::Shl(w2, sh));
        const V64 hi = hn::Shr(w2, hn::Sub(k64, sh));  // a count of 64 gives 0
        const V64 n = hn::Add(sh, len2);               // <= 7 + 96
        // Stream pairs (lo, hi) side by side: lanes 0, 2, 4, .. then 1, 3, ..
        hn::Store(hn::InterleaveLower(d64, lo, hi), d64, wo + 2 * s0);
        hn::Store(hn::InterleaveUpper(d64, lo, hi), d64, wo + 2 * s0 + N64);
        hn::Store(hn::TableLookupLanes(ptr[j], pair_order), d64, at + s0);  // the pairs' order
        ptr[j] = hn::Add(ptr[j], hn::ShiftRight<3>(n));
        // The bits past the whole bytes: lo >> c | hi << (64 - c) | hi >> (c - 64),
        // c = 8 * bytes; counts of 64 or more (wrapped negatives too) give 0.
        const V64 c = hn::AndNot(low3, n);
        acc[j] = hn::Or(hn::Shr(lo, c), hn::Or(hn::Shl(hi, hn::Sub(k64, c)), hn::Shr(hi, hn::Sub(c, k64))));
        nb[j] = hn::And(n, low3);
      }
    }
    // Scalar stores: GCC would turn this loop into a vpscatterqq, slower
    // here, which the opaque index prevents.
    for (size_t i = 0; i < size_t{rc} / 8 * kCapStreams; ++i) {
#if defined(__GNUC__)
      __asm__("" : "+r"(i));
#endif
      std::memcpy(reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(where[i])), words + 2 * i, 16);
    }
  }
  alignas(64) uint64_t a[kCapStreams], n[kCapStreams], p[kCapStreams];
  for (size_t j = 0; j < kVecs; ++j) {
    hn::Store(acc[j], d64, a + j * N64);
    hn::Store(nb[j], d64, n + j * N64);
    hn::Store(ptr[j], d64, p + j * N64);
  }
  for (uint32_t s = 0; s < kCapStreams; ++s) {
    wr->acc[s] = a[s];
    wr->nb[s] = static_cast<uint32_t>(n[s]);
    wr->ptr[s] = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(p[s]));
  }
}
#endif  // HWY_TARGET != HWY_SCALAR

void CapPackRows(const uint8_t* exps, uint32_t rows, const uint32_t cl[256], uint32_t first, uint32_t last,
                 CapWriters* w) {
#if HWY_TARGET != HWY_SCALAR
  PackRowsSimd<false>(exps, rows, cl, first, last, w, 0);
#else
  (void)first;
  (void)last;
  PackRowsScalar(exps, rows, cl, w);
#endif
}

void CapPackRowsSet(const uint8_t* exps, uint32_t rows, const uint32_t* cl, uint32_t mask, CapWriters* w) {
#if HWY_TARGET != HWY_SCALAR
  PackRowsSimd<true>(exps, rows, cl, 0, 0, w, mask);
#else
  PackRowsScalar(exps, rows, cl, w, mask);
#endif
}

// Input bytes the split prefetches ahead of its loads (past the block's
// end too: the next block's start). 16 KiB: the best of the distances
// measured on AVX-512 and AVX2 (docs/DESIGN.md, section 3).
constexpr uint64_t kSplitPrefetch = 16384;

// Where the split's prefetches go: input byte off of the block at in, and
// past the block's end (end bytes) the next input's bytes: the following
// block of the frame, or a batch's next page (a page is one block, so the
// prefetches would otherwise fetch bytes past it that no one reads).
struct PrefetchPath {
  const uint8_t* in;
  uint64_t end;
  const uint8_t* next;
  HWY_INLINE const uint8_t* at(uint64_t off) const { return off < end ? in + off : next + (off - end); }
};
HWY_INLINE PrefetchPath PathOf(const uint8_t* in, uint64_t end, const uint8_t* next) {
  return {in, end, next != nullptr ? next : in + end};
}

// Residual bytes and exponents of in[i0, i1) (i1 - i0 a multiple of the
// vector length when kStream: aligned non-temporal residual stores).
template <bool kStream>
HWY_INLINE void SplitBf16Range(const uint8_t* in, uint64_t i0, uint64_t i1, uint8_t* res, uint8_t* exps,
                               const PrefetchPath& pf) {
  uint64_t i = i0;
  (void)pf;
#if HWY_TARGET != HWY_SCALAR
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  const V8 k7f = hn::Set(d8, 0x7F);
  for (; i + N <= i1; i += N) {
    for (size_t q = 0; q < 2 * N; q += 64) hwy::Prefetch(pf.at(2 * i + kSplitPrefetch + q));
    const V8 b0 = hn::LoadU(d8, in + 2 * i);
    const V8 b1 = hn::LoadU(d8, in + 2 * i + N);
    const V8 lo = hn::ConcatEven(d8, b1, b0);  // low bytes: mantissa bits 0..6, exponent bit 0
    const V8 hi = hn::ConcatOdd(d8, b1, b0);   // high bytes: sign, exponent bits 1..7
    hn::StoreU(hn::Or(hn::Add(hi, hi), hn::ShiftRight<7>(lo)), d8, exps + i);
    const V8 r = hn::Or(hn::And(lo, k7f), hn::AndNot(k7f, hi));
    if (kStream)
      hn::Stream(r, d8, res + i);
    else
      hn::StoreU(r, d8, res + i);
  }
#endif
  for (; i < i1; ++i) {
    const auto v = static_cast<uint16_t>(in[2 * i] | uint32_t{in[2 * i + 1]} << 8);
    exps[i] = static_cast<uint8_t>(Bf16Traits::exponent(v));
    store_res_bytes<Bf16Traits>(res, i, Bf16Traits::residual(v));
  }
}

// stream: non-temporal residual stores (the frame is past the caches); the
// residuals are not read again by the encoder.
HWY_INLINE void SplitBf16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream,
                          const PrefetchPath& pf) {
#if HWY_TARGET != HWY_SCALAR
  if (stream) {
    const uint64_t N = hn::Lanes(D8());
    const uint64_t to_aligned = (N - reinterpret_cast<uintptr_t>(res) % N) % N;
    const uint64_t head = to_aligned < m ? to_aligned : m;
    const uint64_t body = head + (m - head) / N * N;
    SplitBf16Range<false>(in, 0, head, res, exps, pf);
    SplitBf16Range<true>(in, head, body, res, exps, pf);
    SplitBf16Range<false>(in, body, m, res, exps, pf);
    hwy::FlushStream();
    return;
  }
#endif
  (void)stream;
  SplitBf16Range<false>(in, 0, m, res, exps, pf);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// The split fused with the nibble mode's window counter (histogram-inl.h):
// each vector's exponents are counted while still in registers.
template <bool kStream>
HWY_INLINE void SplitCountWindowBf16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, uint32_t base,
                                     uint64_t counts[256], const PrefetchPath& pf) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  const V8 k7f = hn::Set(d8, 0x7F);
  const auto vec = [&](uint64_t k) {
    const uint64_t i = k * N;
    for (size_t q = 0; q < 2 * N; q += 64) hwy::Prefetch(pf.at(2 * i + kSplitPrefetch + q));
    const V8 b0 = hn::LoadU(d8, in + 2 * i);
    const V8 b1 = hn::LoadU(d8, in + 2 * i + N);
    const V8 lo = hn::ConcatEven(d8, b1, b0);
    const V8 hi = hn::ConcatOdd(d8, b1, b0);
    const V8 e = hn::Or(hn::Add(hi, hi), hn::ShiftRight<7>(lo));
    hn::StoreU(e, d8, exps + i);
    const V8 r = hn::Or(hn::And(lo, k7f), hn::AndNot(k7f, hi));
    if (kStream)
      hn::Stream(r, d8, res + i);
    else
      hn::StoreU(r, d8, res + i);
    return e;
  };
  const auto tail = [&](uint64_t i) {
    SplitBf16Range<false>(in, i, i + 1, res, exps, pf);
    return exps[i];
  };
  CountWindow(vec, tail, m, base, counts);
}
#endif

// After a block's counts: AVX-512 picks the next block's window (-1 when
// the block's values do not sit in one).
HWY_INLINE void NextWindow(const uint64_t counts[256], uint64_t m, int32_t* window) {
  uint64_t in_window = 0;
  const uint32_t base = BestWindow(counts, &in_window);
  *window = in_window * 32 >= m * 31 ? static_cast<int32_t>(base) : -1;
}

// Split and histogram of a bf16 block. AVX-512: *window is the 16-value
// window the vector counter uses while splitting (-1: split, then count
// with scalar tables), set for the next block from this block's counts (KV
// data stays in one window). Other targets: the split, then the nibble
// mode's histogram of the input (now in L2): on AVX2 the counter's table
// lookups in the split's loop are slower, and so is counting from the
// exponent buffer; on AVX-512 fusing is faster (docs/DESIGN.md, section 3).
// The counts are exact either way.
void CapSplitCountBf16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream,
                       uint64_t counts[256], int32_t* window, const uint8_t* pf_next) {
  const PrefetchPath pf = PathOf(in, 2 * m, pf_next);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if (*window >= 0) {
    const auto base = static_cast<uint32_t>(*window);
    if (stream) {  // up to the first aligned residual vector: element by element
      const uint64_t N = hn::Lanes(D8());
      const uint64_t to_aligned = (N - reinterpret_cast<uintptr_t>(res) % N) % N;
      const uint64_t head = to_aligned < m ? to_aligned : m;
      SplitBf16Range<false>(in, 0, head, res, exps, pf);
      for (uint64_t i = 0; i < head; ++i) ++counts[exps[i]];
      SplitCountWindowBf16<true>(in + 2 * head, m - head, res + head, exps + head, base, counts,
                                 PathOf(in + 2 * head, 2 * (m - head), pf.next));
      hwy::FlushStream();
    } else {
      SplitCountWindowBf16<false>(in, m, res, exps, base, counts, pf);
    }
  } else {
    SplitBf16(in, m, res, exps, stream, pf);
    uint64_t unused = 0;
    CountScalar(exps, m, counts, &unused);
  }
  NextWindow(counts, m, window);
#else
  (void)window;
  SplitBf16(in, m, res, exps, stream, pf);
  HistogramTyped<Bf16Traits>(in, m, counts, nullptr);
#endif
}

// fp8_e4m3 symbols are whole bytes (FORMAT.md 4.6.7): the histogram's
// scalar counter (no 16-value window holds them).
void CapCountBytes(const uint8_t* p, uint64_t m, uint64_t counts[256]) {
  uint64_t unused = 0;
  CountScalar(p, m, counts, &unused);
}

// ---- fp16 / fp32: the same split, their residual layouts (FORMAT.md 2) ----

// fp16 element i: residual byte to res[i], 3-bit part (sign, mantissa bits
// 9..8) ORed into high (its byte zeroed before), exponent returned.
HWY_INLINE uint8_t SplitOneFp16(const uint8_t* in, uint64_t i, uint8_t* res, uint8_t* high) {
  const auto v = static_cast<uint16_t>(in[2 * i] | uint32_t{in[2 * i + 1]} << 8);
  store_residual<Fp16Traits>(res, high, i, Fp16Traits::residual(v));
  return static_cast<uint8_t>(Fp16Traits::exponent(v));
}

// fp32 element i: residual bytes to res[3i..3i+2], exponent returned.
HWY_INLINE uint8_t SplitOneFp32(const uint8_t* in, uint64_t i, uint8_t* res) {
  uint32_t v;
  std::memcpy(&v, in + 4 * i, 4);
  store_res_bytes<Fp32Traits>(res, i, Fp32Traits::residual(v));
  return static_cast<uint8_t>(Fp32Traits::exponent(v));
}

// fp8_e5m2 element i: its 3-bit part (sign, the two mantissa bits) ORed
// into high (its byte zeroed before), exponent returned.
HWY_INLINE uint8_t SplitOneE5m2(const uint8_t* in, uint64_t i, uint8_t* high) {
  store_residual<Fp8E5M2Traits>(nullptr, high, i, Fp8E5M2Traits::residual(in[i]));
  return static_cast<uint8_t>(Fp8E5M2Traits::exponent(in[i]));
}

// The 3-bit stream's bytes of fp16 elements [i0, i1) (i0 % 8 == 0) zeroed:
// the ones that SplitOneFp16 ORs into.
HWY_INLINE void ZeroHigh(uint8_t* high, uint64_t i0, uint64_t i1) {
  if (i1 > i0) std::memset(high + 3 * i0 / 8, 0, (3 * i1 + 7) / 8 - 3 * i0 / 8);
}

#if HWY_TARGET != HWY_SCALAR

// fp16 high bytes (fp8_e5m2 bytes) h of elements i.. (i % 16 == 0): the
// packed 3-bit parts (sign, mantissa bits 9..8) to high, exponents returned.
// exact: see SplitVecFp16.
HWY_INLINE V8 SplitHighBytes(V8 h, uint64_t i, bool exact, uint8_t* high) {
  const D8 d8;
  const D16 d16;
  const auto h16 = hn::BitCast(d16, h);
  // 16-bit shifts: the bits crossing into a byte are masked off.
  const V8 e = hn::And(hn::BitCast(d8, hn::ShiftRight<2>(h16)), hn::Set(d8, 0x1F));
  const V8 r3 = hn::Or(hn::And(hn::BitCast(d8, hn::ShiftRight<5>(h16)), hn::Set(d8, 4)), hn::And(h, hn::Set(d8, 3)));
  const V8 packed = Pack3(r3);
  uint8_t* p = high + 3 * i / 8;
  if (exact)
    StoreBlocksExact<6>(packed, p);
  else
    StoreBlocksOverlap<6>(d8, packed, p);
  return e;
}

// fp16 vector at element i (i % 16 == 0): low bytes are the residual bytes;
// the high bytes (sign, exponent, mantissa bits 9..8) give the exponents
// and the 3-bit parts, packed (Pack3) to 6 bytes per 16 elements. exact:
// store exactly this vector's 3N/8 bytes (else each 128-bit block leaves
// with one 16-byte store, 10 bytes past its 6, that later vectors rewrite).
template <bool kStream>
HWY_INLINE V8 SplitVecFp16(const uint8_t* in, uint64_t i, bool exact, uint8_t* res, uint8_t* high,
                          const PrefetchPath& pf) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  for (size_t q = 0; q < 2 * N; q += 64) hwy::Prefetch(pf.at(2 * i + kSplitPrefetch + q));
  const V8 b0 = hn::LoadU(d8, in + 2 * i);
  const V8 b1 = hn::LoadU(d8, in + 2 * i + N);
  const V8 lo = hn::ConcatEven(d8, b1, b0);
  if (kStream)
    hn::Stream(lo, d8, res + i);
  else
    hn::StoreU(lo, d8, res + i);
  return SplitHighBytes(hn::ConcatOdd(d8, b1, b0), i, exact, high);
}

// Lane moves that turn four vectors of fp32 residuals, each 128-bit block
// compacted to 12 bytes (three u32 lanes of four), into three whole
// vectors: output o takes its first cut[o] lanes from input o, the rest
// from input o + 1 (two lane permutes and a blend).
struct Fp32Pack {
  decltype(hn::SetTableIndices(D32(), static_cast<const uint32_t*>(nullptr))) from_lo[3], from_hi[3];
  decltype(hn::FirstN(D32(), 0)) take_lo[3];
  Fp32Pack() {
    const D32 d32;
    const size_t n = hn::Lanes(d32);
    const size_t per = 3 * n / 4;  // residual lanes per input vector
    alignas(HWY_MAX_BYTES) uint32_t lo[HWY_MAX_BYTES / 4], hi[HWY_MAX_BYTES / 4];
    for (size_t o = 0; o < 3; ++o) {
      const size_t cut = (o + 1) * per - o * n;  // lanes of output o from input o
      for (size_t l = 0; l < n; ++l) {
        const size_t pos = o * n + l;  // residual lane in the concatenation of the inputs
        const size_t q = l < cut ? pos - o * per : pos - (o + 1) * per;
        const uint32_t lane = static_cast<uint32_t>(q / 3 * 4 + q % 3);
        lo[l] = l < cut ? lane : 0;
        hi[l] = l < cut ? 0 : lane;
      }
      from_lo[o] = hn::SetTableIndices(d32, lo);
      from_hi[o] = hn::SetTableIndices(d32, hi);
      take_lo[o] = hn::FirstN(d32, cut);
    }
  }
};

// fp32 vector of N elements at element i: 3N residual bytes (three whole
// vectors at res + 3i), the exponents returned.
template <bool kStream>
HWY_INLINE V8 SplitVecFp32(const uint8_t* in, uint64_t i, uint8_t* res, const Fp32Pack& pk, const PrefetchPath& pf) {
  const D8 d8;
  const D16 d16;
  const D32 d32;
  const size_t N = hn::Lanes(d8);
  alignas(16) static constexpr uint8_t kCompact[16] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 0x80, 0x80, 0x80, 0x80};
  const V8 compact = hn::LoadDup128(d8, kCompact);
  for (size_t q = 0; q < 4 * N; q += 64) hwy::Prefetch(pf.at(4 * i + kSplitPrefetch + q));
  hn::Vec<D32> c[4];
  hn::Vec<D16> hi[4];
  for (size_t k = 0; k < 4; ++k) {
    const auto v = hn::BitCast(d32, hn::LoadU(d8, in + 4 * i + k * N));
    // Residual: mantissa | sign at bit 23.
    const auto r = hn::Or(hn::And(v, hn::Set(d32, 0x7FFFFFu)), hn::And(hn::ShiftRight<8>(v), hn::Set(d32, 0x800000u)));
    c[k] = hn::BitCast(d32, hn::TableLookupBytesOr0(hn::BitCast(d8, r), compact));
    hi[k] = hn::BitCast(d16, hn::ShiftLeft<1>(v));  // exponent in byte 3
  }
  uint8_t* p = res + 3 * i;
  for (size_t o = 0; o < 3; ++o) {
    const auto w = hn::IfThenElse(pk.take_lo[o], hn::TableLookupLanes(c[o], pk.from_lo[o]),
                                  hn::TableLookupLanes(c[o + 1], pk.from_hi[o]));
    if (kStream)
      hn::Stream(hn::BitCast(d8, w), d8, p + o * N);
    else
      hn::StoreU(hn::BitCast(d8, w), d8, p + o * N);
  }
  const auto h01 = hn::ConcatOdd(d16, hi[1], hi[0]);
  const auto h23 = hn::ConcatOdd(d16, hi[3], hi[2]);
  return hn::ConcatOdd(d8, hn::BitCast(d8, h23), hn::BitCast(d8, h01));
}

// Elements [0, m): [0, h) by one(i), the whole vectors of [h, m) by
// vec(i, v_end) (v_end: the end of the vectors), the rest by one(i);
// exponents to exps. window >= 0 (AVX-512): the vectors' exponents are
// counted in registers by the window counter, the others one by one;
// otherwise nothing is counted.
template <class VecFn, class OneFn>
HWY_INLINE void SplitLoop(const VecFn& vec, const OneFn& one, uint64_t h, uint64_t m, uint8_t* exps,
                          uint64_t counts[256], int32_t window) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  const uint64_t v_end = h + (m - h) / N * N;
  for (uint64_t i = 0; i < h; ++i) exps[i] = one(i);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if (window >= 0) {
    for (uint64_t i = 0; i < h; ++i) ++counts[exps[i]];
    const auto vk = [&](uint64_t k) {
      const uint64_t i = h + k * N;
      const V8 e = vec(i, v_end);
      hn::StoreU(e, d8, exps + i);
      return e;
    };
    const auto tail = [&](uint64_t j) { return exps[h + j] = one(h + j); };
    CountWindow(vk, tail, m - h, static_cast<uint32_t>(window), counts);
    return;
  }
#else
  (void)counts;
  (void)window;
#endif
  uint64_t i = h;
  for (; i < v_end; i += N) hn::StoreU(vec(i, v_end), d8, exps + i);
  for (; i < m; ++i) exps[i] = one(i);
}

template <bool kStream>
HWY_INLINE void SplitFp16(const uint8_t* in, uint64_t h, uint64_t m, uint8_t* res, uint8_t* high, uint8_t* exps,
                          uint64_t counts[256], int32_t window, const PrefetchPath& pf) {
  const uint64_t N = hn::Lanes(D8());
  const auto vec = [&](uint64_t i, uint64_t v_end) {
    // Overlapping 3-bit stores only where later vectors rewrite their spill.
    return SplitVecFp16<kStream>(in, i, i + N + 32 > v_end, res, high, pf);
  };
  const auto one = [&](uint64_t i) { return SplitOneFp16(in, i, res, high); };
  SplitLoop(vec, one, h, m, exps, counts, window);
}

template <bool kStream>
HWY_INLINE void SplitFp32(const uint8_t* in, uint64_t h, uint64_t m, uint8_t* res, uint8_t* exps,
                          uint64_t counts[256], int32_t window, const PrefetchPath& pf) {
  const Fp32Pack pk;
  const auto vec = [&](uint64_t i, uint64_t) { return SplitVecFp32<kStream>(in, i, res, pk, pf); };
  const auto one = [&](uint64_t i) { return SplitOneFp32(in, i, res); };
  SplitLoop(vec, one, h, m, exps, counts, window);
}

// fp8_e5m2 vector at element i (i % 16 == 0): the byte is fp16's high
// byte (sign, exponent, two mantissa bits); no residual byte.
HWY_INLINE V8 SplitVecE5m2(const uint8_t* in, uint64_t i, bool exact, uint8_t* high, const PrefetchPath& pf) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  for (size_t q = 0; q < N; q += 64) hwy::Prefetch(pf.at(i + kSplitPrefetch + q));
  return SplitHighBytes(hn::LoadU(d8, in + i), i, exact, high);
}

HWY_INLINE void SplitE5m2(const uint8_t* in, uint64_t m, uint8_t* high, uint8_t* exps, uint64_t counts[256],
                          int32_t window, const PrefetchPath& pf) {
  const uint64_t N = hn::Lanes(D8());
  const auto vec = [&](uint64_t i, uint64_t v_end) { return SplitVecE5m2(in, i, i + N + 32 > v_end, high, pf); };
  const auto one = [&](uint64_t i) { return SplitOneE5m2(in, i, high); };
  SplitLoop(vec, one, 0, m, exps, counts, window);
}
#endif  // HWY_TARGET != HWY_SCALAR

// The counts of an fp16 / fp32 block after its split: AVX-512 counted
// inside the split when it had a window (win >= 0), else counts the
// exponents now, then picks the next block's window; other targets run the
// nibble mode's histogram of the input.
template <class Traits>
HWY_INLINE void FinishCounts(const uint8_t* in, const uint8_t* exps, uint64_t m, int32_t win, uint64_t counts[256],
                             int32_t* window) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  (void)in;
  if (win < 0) {
    uint64_t unused = 0;
    CountScalar(exps, m, counts, &unused);
  }
  NextWindow(counts, m, window);
#else
  (void)exps;
  (void)win;
  (void)window;
  HistogramTyped<Traits>(in, m, counts, nullptr);
#endif
}

// Split and histogram of an fp16 / fp32 block, with bf16's policy
// (CapSplitCountBf16): AVX-512 counts with the window counter inside the
// split, other targets split, then run the nibble mode's histogram. For
// fp16 / fp32 the two differ within the noise on both targets, so each
// target keeps bf16's choice (docs/DESIGN.md, section 3).
void CapSplitCountFp16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* high, uint8_t* exps, bool stream,
                       uint64_t counts[256], int32_t* window, const uint8_t* pf_next) {
#if HWY_TARGET != HWY_SCALAR
  const PrefetchPath pf = PathOf(in, 2 * m, pf_next);
  const uint64_t N = hn::Lanes(D8());
  const auto addr = reinterpret_cast<uintptr_t>(res);
  // Non-temporal stores from the first aligned residual vector; the
  // elements before it (a multiple of 16 here: the vectors' 3-bit parts
  // start at whole bytes) one by one.
  const bool nt = stream && addr % 16 == 0;
  const uint64_t to_aligned = nt ? (N - addr % N) % N : 0;
  const uint64_t h = to_aligned < m ? to_aligned : m;
  ZeroHigh(high, 0, h);
  ZeroHigh(high, h + (m - h) / N * N, m);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const int32_t win = *window;
#else
  const int32_t win = -1;
#endif
  if (nt) {
    SplitFp16<true>(in, h, m, res, high, exps, counts, win, pf);
    hwy::FlushStream();
  } else {
    SplitFp16<false>(in, h, m, res, high, exps, counts, win, pf);
  }
  FinishCounts<Fp16Traits>(in, exps, m, win, counts, window);
#else
  (void)stream;
  (void)window;
  (void)pf_next;
  ZeroHigh(high, 0, m);
  for (uint64_t i = 0; i < m; ++i) exps[i] = SplitOneFp16(in, i, res, high);
  HistogramTyped<Fp16Traits>(in, m, counts, nullptr);
#endif
}

// fp8_e5m2 (one byte, no residual byte stream): the fp16 split's 3-bit
// part and exponent, with the same counting policy.
void CapSplitCountE5m2(const uint8_t* in, uint64_t m, uint8_t* high, uint8_t* exps, uint64_t counts[256],
                       int32_t* window, const uint8_t* pf_next) {
#if HWY_TARGET != HWY_SCALAR
  const PrefetchPath pf = PathOf(in, m, pf_next);
  const uint64_t N = hn::Lanes(D8());
  ZeroHigh(high, m / N * N, m);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const int32_t win = *window;
#else
  const int32_t win = -1;
#endif
  SplitE5m2(in, m, high, exps, counts, win, pf);
  FinishCounts<Fp8E5M2Traits>(in, exps, m, win, counts, window);
#else
  (void)window;
  (void)pf_next;
  ZeroHigh(high, 0, m);
  for (uint64_t i = 0; i < m; ++i) exps[i] = SplitOneE5m2(in, i, high);
  HistogramTyped<Fp8E5M2Traits>(in, m, counts, nullptr);
#endif
}

void CapSplitCountFp32(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream, uint64_t counts[256],
                       int32_t* window, const uint8_t* pf_next) {
#if HWY_TARGET != HWY_SCALAR
  const PrefetchPath pf = PathOf(in, 4 * m, pf_next);
  const uint64_t N = hn::Lanes(D8());
  const auto addr = reinterpret_cast<uintptr_t>(res);
  // Non-temporal stores from the first element whose 3 residual bytes
  // start an aligned vector (3 is odd: one of any N consecutive does).
  uint64_t h = 0;
  if (stream)
    while ((addr + 3 * h) % N != 0) ++h;
  if (h > m) h = m;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const int32_t win = *window;
#else
  const int32_t win = -1;
#endif
  if (stream) {
    SplitFp32<true>(in, h, m, res, exps, counts, win, pf);
    hwy::FlushStream();
  } else {
    SplitFp32<false>(in, h, m, res, exps, counts, win, pf);
  }
  FinishCounts<Fp32Traits>(in, exps, m, win, counts, window);
#else
  (void)stream;
  (void)window;
  (void)pf_next;
  for (uint64_t i = 0; i < m; ++i) exps[i] = SplitOneFp32(in, i, res);
  HistogramTyped<Fp32Traits>(in, m, counts, nullptr);
#endif
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_CAPACITY_ENCODE_INL_H_
