/* SPDX-License-Identifier: Apache-2.0 */
// Per-target encode kernels: one pass over the input does the split, the
// code lookup, nibble packing, 3-bit packing and escape gathering.
#if defined(SPLITZIP_CPU_ENCODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_ENCODE_INL_H_
#undef SPLITZIP_CPU_ENCODE_INL_H_
#else
#define SPLITZIP_CPU_ENCODE_INL_H_
#endif

#include "core/codec.h"
#include "cpu/kernels.h"
#include "cpu/scalar_kernels.h"
#include "cpu/simd-inl.h"
#include "cpu/xxh3-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

// Run() encodes one vector of Lanes(D8) elements starting at element j:
// writes the residual streams and returns code+1 per element (0 = escape).
// exact: write no byte past this vector's part of a stream (else 16-byte
// overlapping stores may spill into the next part).
// kStream: non-temporal stores (only blocks with kCanStream, whose stores
// never overlap).
struct Bf16Block {
  static constexpr bool kCanStream = true;
  template <bool kStream, class Lk>
  HWY_INLINE V8 Run(const uint8_t* src, uint64_t j, bool /*exact*/, const Lk& lookup,
                    const Streams& s) const {
    const D8 d8;
    const D16 d16;
    const size_t N = hn::Lanes(d8);
    return RunV<kStream>(hn::LoadU(d8, src + 2 * j), hn::LoadU(d8, src + 2 * j + N), j, false, lookup, s);
  }
  // Run() on the vector's two input vectors, already loaded (the fused
  // checksum loop hashes them too).
  template <bool kStream, class Lk>
  HWY_INLINE V8 RunV(V8 b0, V8 b1, uint64_t j, bool /*exact*/, const Lk& lookup, const Streams& s) const {
    const D8 d8;
    const D16 d16;
    const auto v0 = hn::BitCast(d16, b0);
    const auto v1 = hn::BitCast(d16, b1);
    // Residual: mantissa low 7 bits | sign at bit 7 (byte = lo | hi of x).
    const auto k807F = hn::Set(d16, 0x807F);
    const auto x0 = hn::And(v0, k807F);
    const auto x1 = hn::And(v1, k807F);
    const auto r0 = hn::Or(x0, hn::ShiftRight<8>(x0));
    const auto r1 = hn::Or(x1, hn::ShiftRight<8>(x1));
    StoreOut<kStream>(hn::ConcatEven(d8, hn::BitCast(d8, r1), hn::BitCast(d8, r0)), s.res + j);
    // Exponent: the high byte of v << 1.
    const V8 e = hn::ConcatOdd(d8, hn::BitCast(d8, hn::ShiftLeft<1>(v1)),
                               hn::BitCast(d8, hn::ShiftLeft<1>(v0)));
    return lookup(e);
  }
};

// Splits the high bytes H of fp16 values or the bytes of fp8 values (same
// layout: sign bit 7, exponent bits 6..2, two mantissa bits 1..0).
HWY_INLINE void SplitE5(V8 h, V8* e, V8* r3) {
  const D8 d8;
  const D16 d16;
  const auto h16 = hn::BitCast(d16, h);
  // 16-bit shifts: the bits crossing into a byte are masked off.
  *e = hn::And(hn::BitCast(d8, hn::ShiftRight<2>(h16)), hn::Set(d8, 0x1F));
  *r3 = hn::Or(hn::And(hn::BitCast(d8, hn::ShiftRight<5>(h16)), hn::Set(d8, 4)),
               hn::And(h, hn::Set(d8, 3)));
}

HWY_INLINE void Store3(V8 r3, uint64_t j, bool exact, const Streams& s) {
  const V8 packed = Pack3(r3);
  uint8_t* p = s.high + 3 * j / 8;
  if (exact) {
    StoreBlocksExact<6>(packed, p);
  } else {
    StoreBlocksOverlap<6>(D8(), packed, p);
  }
}

struct Fp16Block {
  static constexpr bool kCanStream = false;
  template <bool kStream, class Lk>
  HWY_INLINE V8 Run(const uint8_t* src, uint64_t j, bool exact, const Lk& lookup,
                    const Streams& s) const {
    const D8 d8;
    const size_t N = hn::Lanes(d8);
    return RunV<kStream>(hn::LoadU(d8, src + 2 * j), hn::LoadU(d8, src + 2 * j + N), j, exact, lookup, s);
  }
  // As Bf16Block::RunV (the fused checksum loop).
  template <bool kStream, class Lk>
  HWY_INLINE V8 RunV(V8 b0, V8 b1, uint64_t j, bool exact, const Lk& lookup, const Streams& s) const {
    const D8 d8;
    hn::StoreU(hn::ConcatEven(d8, b1, b0), d8, s.res + j);  // mantissa bits 0..7
    V8 e, r3;
    SplitE5(hn::ConcatOdd(d8, b1, b0), &e, &r3);
    Store3(r3, j, exact, s);
    return lookup(e);
  }
};

struct Fp8Block {
  static constexpr bool kCanStream = false;
  template <bool kStream, class Lk>
  HWY_INLINE V8 Run(const uint8_t* src, uint64_t j, bool exact, const Lk& lookup,
                    const Streams& s) const {
    const D8 d8;
    V8 e, r3;
    SplitE5(hn::LoadU(d8, src + j), &e, &r3);
    Store3(r3, j, exact, s);
    return lookup(e);
  }
};

struct Fp32Block {
  static constexpr bool kCanStream = false;
  template <bool kStream, class Lk>
  HWY_INLINE V8 Run(const uint8_t* src, uint64_t j, bool exact, const Lk& lookup,
                    const Streams& s) const {
    const D8 d8;
    const D16 d16;
    const D32 d32;
    const size_t N = hn::Lanes(d8);
    const size_t N32 = hn::Lanes(d32);
    // Per block: bytes 0..2 of each u32 lane, packed to the block start.
    alignas(16) static constexpr uint8_t kCompact[16] = {0, 1, 2, 4, 5, 6, 8, 9,
                                                         10, 12, 13, 14, 0x80, 0x80, 0x80, 0x80};
    const V8 compact = hn::LoadDup128(d8, kCompact);
    hn::Vec<D16> hi[4];
    for (size_t k = 0; k < 4; ++k) {
      const auto v = hn::BitCast(d32, hn::LoadU(d8, src + 4 * j + k * N));
      const auto r = hn::Or(hn::And(v, hn::Set(d32, 0x7FFFFFu)),
                            hn::And(hn::ShiftRight<8>(v), hn::Set(d32, 0x800000u)));
      const V8 packed = hn::TableLookupBytesOr0(hn::BitCast(d8, r), compact);
      uint8_t* p = s.res + 3 * (j + k * N32);
      if (exact) {
        StoreBlocksExact<12>(packed, p);
      } else {
        StoreBlocksOverlap<12>(d8, packed, p);
      }
      hi[k] = hn::BitCast(d16, hn::ShiftLeft<1>(v));  // exponent in byte 3
    }
    const auto h01 = hn::ConcatOdd(d16, hi[1], hi[0]);
    const auto h23 = hn::ConcatOdd(d16, hi[3], hi[2]);
    const V8 e = hn::ConcatOdd(d8, hn::BitCast(d8, h23), hn::BitCast(d8, h01));
    return lookup(e);
  }
};

// The block of each dtype the nibble codec takes (EncodeRange); a new one
// without a block does not compile.
template <class T>
struct EncBlockOf;
template <>
struct EncBlockOf<Bf16Traits> { using type = Bf16Block; };
template <>
struct EncBlockOf<Fp16Traits> { using type = Fp16Block; };
template <>
struct EncBlockOf<Fp32Traits> { using type = Fp32Block; };
template <>
struct EncBlockOf<Fp8E5M2Traits> { using type = Fp8Block; };

// Elements per escape-gathering group. The loop only stores each vector's
// escape mask (a bitmap of the group in L1) and the escapes are recorded
// after the group, re-reading just those elements from L1. So the
// streaming loop has no data-dependent branch: a mispredict there throws
// away the loads in flight (a per-vector branch halved throughput at 1%
// escapes).
constexpr uint64_t kGroup = 2048;

// Two vectors per step so the packed codes fill one vector; the last step
// writes exactly (no overlapping store may cross `end`, which another
// thread may own). The remainder goes to the scalar kernel.
// With a FusedXxh3 (bf16, fp16), [begin, end) is whole checksum blocks (the
// last may be the input's shorter last block, whole KiB: FusedXxh3::last_end).
template <class Traits, class Block, bool kStream, class Lk, class Hash = NoHash>
HWY_INLINE void EncodeLoop(const uint8_t* src, uint64_t begin, uint64_t end, const Lk& lookup,
                           const EncodeTables& t, const Streams& s, EscapeSink* sink,
                           Hash* hash = nullptr) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  const V8 one = hn::Set(d8, 1);
  const V8 zero = hn::Zero(d8);
  const Block block;
  // Bit k: element first + k is an escape. Whole u64 words: a word covers
  // 64 elements from a multiple of 64, so it never straddles a chunk.
  alignas(8) uint8_t bitmap[kGroup / 8 + 8];
  uint64_t i = begin;
  while (i + 2 * N <= end) {
    const uint64_t first = i;
    for (; i + 2 * N <= end && i < first + kGroup; i += 2 * N) {
      const bool exact = i + 4 * N > end;
      V8 t0, t1;
      if constexpr (Hash::kOn) {
        const uint8_t* p = src + 2 * i;
        const V8 a0 = hn::LoadU(d8, p);
        const V8 a1 = hn::LoadU(d8, p + N);
        const V8 a2 = hn::LoadU(d8, p + 2 * N);
        const V8 a3 = hn::LoadU(d8, p + 3 * N);
        hash->Feed(a0, a1, a2, a3, 2 * i);
        t0 = block.template RunV<kStream>(a0, a1, i, exact, lookup, s);
        t1 = block.template RunV<kStream>(a2, a3, i + N, exact, lookup, s);
      } else {
        t0 = block.template Run<kStream>(src, i, exact, lookup, s);
        t1 = block.template Run<kStream>(src, i + N, exact, lookup, s);
      }
      StoreOut<kStream>(PackNibbles(hn::SaturatedSub(t0, one), hn::SaturatedSub(t1, one)), s.codes + i / 2);
      hn::StoreMaskBits(d8, hn::Eq(t0, zero), bitmap + (i - first) / 8);
      hn::StoreMaskBits(d8, hn::Eq(t1, zero), bitmap + (i - first + N) / 8);
      if constexpr (Hash::kOn) hash->After(2 * (i + 2 * N), src + 2 * (i + 2 * N));
    }
    const uint64_t bits = i - first;  // a multiple of 2 * N >= 32
    std::memset(bitmap + bits / 8, 0, (64 - bits % 64) % 64 / 8);  // pad the last word
    for (uint64_t w = 0; w < (bits + 63) / 64; ++w) {
      uint64_t m;
      std::memcpy(&m, bitmap + 8 * w, 8);
      if (m != 0) record_escape_word<Traits>(src, m, first + 64 * w, sink);
    }
  }
  encode_scalar<Traits>(src, i, end, t, s, sink);
}

template <class Traits, class Block>
void EncodeTyped(const uint8_t* src, uint64_t begin, uint64_t end, const EncodeTables& t,
                 const Streams& s, EscapeSink* sink) {
  WithLookup(t, [&](const auto& lookup) {
    if (Block::kCanStream && s.stream) {
      EncodeLoop<Traits, Block, Block::kCanStream>(src, begin, end, lookup, t, s, sink);
    } else {
      EncodeLoop<Traits, Block, false>(src, begin, end, lookup, t, s, sink);
    }
  });
}

// bf16 / fp16 [begin, mid) = whole checksum blocks, hashed in the loop, and
// the input's shorter last block when last_end (its end in bytes) is not 0.
template <class Traits, class Block>
void EncodeHashed(const uint8_t* src, uint64_t begin, uint64_t mid, const EncodeTables& t, const Streams& s,
                  EscapeSink* sink, uint64_t* hashes, uint64_t last_end) {
  if constexpr (kFusedHash) {
    FusedXxh3 hash(hashes);
    hash.last_end = last_end;
    WithLookup(t, [&](const auto& lookup) {
      if constexpr (Block::kCanStream) {
        if (s.stream) {
          EncodeLoop<Traits, Block, true>(src, begin, mid, lookup, t, s, sink, &hash);
          return;
        }
      }
      EncodeLoop<Traits, Block, false>(src, begin, mid, lookup, t, s, sink, &hash);
    });
  }
}

uint64_t EncodeRange(Dtype dtype, const void* src_v, uint64_t begin, uint64_t end,
                     const EncodeTables& t, const Streams& s, EscapeSink* sink, uint64_t* hashes,
                     uint64_t total) {
  const auto* src = static_cast<const uint8_t*>(src_v);
  constexpr uint64_t kPer = kChecksumBlockBytes / 2;  // bf16 / fp16 elements per block
  const bool two_byte = dtype == Dtype::bf16 || dtype == Dtype::fp16;
  if (kFusedHash && two_byte && hashes != nullptr && begin % kPer == 0) {
    const uint64_t mid = begin + (end - begin) / kPer * kPer;
    // The input's shorter last block too when it is whole KiB (a 32 KiB
    // page: else hashed by the caller after the loop, 0.83x of checksum off).
    const bool last = end == total && end > mid && (end - mid) * 2 % 1024 == 0;
    const uint64_t hashed = last ? end : mid;
    if (hashed > begin) {
      if (dtype == Dtype::bf16) {
        EncodeHashed<Bf16Traits, Bf16Block>(src, begin, hashed, t, s, sink, hashes, last ? 2 * end : 0);
        if (hashed < end) EncodeTyped<Bf16Traits, Bf16Block>(src, hashed, end, t, s, sink);
      } else {
        EncodeHashed<Fp16Traits, Fp16Block>(src, begin, hashed, t, s, sink, hashes, last ? 2 * end : 0);
        if (hashed < end) EncodeTyped<Fp16Traits, Fp16Block>(src, hashed, end, t, s, sink);
      }
      return hashed - begin;
    }
  }
  // The nibble codec's dtypes (core/codec.h); the others have codecs of their own.
  visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(dtype), [&](auto tr) {
    using T = decltype(tr);
    EncodeTyped<T, typename EncBlockOf<T>::type>(src, begin, end, t, s, sink);
  });
  return 0;
}

#else  // HWY_SCALAR: no vectors, the scalar kernel is the whole story.

uint64_t EncodeRange(Dtype dtype, const void* src_v, uint64_t begin, uint64_t end,
                     const EncodeTables& t, const Streams& s, EscapeSink* sink, uint64_t* /*hashes*/,
                     uint64_t /*total*/) {
  const auto* src = static_cast<const uint8_t*>(src_v);
  visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(dtype),
                                   [&](auto tr) { encode_scalar<decltype(tr)>(src, begin, end, t, s, sink); });
  return 0;
}

#endif  // HWY_TARGET != HWY_SCALAR

int64_t EncodeTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_ENCODE_INL_H_
