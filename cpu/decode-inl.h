/* SPDX-License-Identifier: Apache-2.0 */
// Per-target decode kernels: unpack nibbles, look the exponent up in the
// 16-entry codebook (one byte shuffle), rebuild the values, patch the
// (already validated) escapes of each vector before it is stored.
#if defined(SPLITZIP_CPU_DECODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_DECODE_INL_H_
#undef SPLITZIP_CPU_DECODE_INL_H_
#else
#define SPLITZIP_CPU_DECODE_INL_H_
#endif

#include "core/codec.h"
#include "cpu/kernels.h"
#include "cpu/scalar_kernels.h"
#include "cpu/simd-inl.h"
#include "cpu/xxh3-inl.h"
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

struct DecodeCtx {
  const ConstStreams& s;
  V8 exp, lo, hi;  // codebook tables, broadcast to every block
  ZipOrder zip;
};

// Each block decodes Lanes(D8) elements starting at j from their codes c
// and stores the values (element order) at o.
struct Bf16Block {
  static bool Fits(const DecodeCtx&, uint64_t) { return true; }
  HWY_INLINE void Run(const DecodeCtx& x, uint64_t j, V8 c, uint8_t* o) const {
    const D8 d8;
    const size_t N = hn::Lanes(d8);
    const V8 r = hn::LoadU(d8, x.s.res + j);
    // Low byte: mantissa | exponent bit 0 << 7; high byte: sign | exponent >> 1.
    const V8 lo = x.zip(hn::Or(hn::And(r, hn::Set(d8, 0x7F)), hn::TableLookupBytes(x.lo, c)));
    const V8 hi = x.zip(hn::Or(hn::And(r, hn::Set(d8, 0x80)), hn::TableLookupBytes(x.hi, c)));
    hn::StoreU(hn::InterleaveLower(d8, lo, hi), d8, o);
    hn::StoreU(hn::InterleaveUpper(d8, lo, hi), d8, o + N);
  }
};

// fp16 high byte / fp8 byte from code and 3-bit part: sign | exponent << 2 |
// two mantissa bits.
HWY_INLINE V8 JoinE5(const DecodeCtx& x, V8 c, V8 r3) {
  const D8 d8;
  const D16 d16;
  const V8 sign = hn::And(hn::BitCast(d8, hn::ShiftLeft<5>(hn::BitCast(d16, r3))), hn::Set(d8, 0x80));
  return hn::Or(hn::TableLookupBytes(x.hi, c), hn::Or(sign, hn::And(r3, hn::Set(d8, 3))));
}

// 3-bit loads read 16 bytes at 6-byte steps per block.
HWY_INLINE bool Fits3(const DecodeCtx& x, uint64_t j) {
  return x.s.high + 3 * j / 8 + 6 * (kBlocks - 1) + 16 <= x.s.end;
}

struct Fp16Block {
  static bool Fits(const DecodeCtx& x, uint64_t j) { return Fits3(x, j); }
  HWY_INLINE void Run(const DecodeCtx& x, uint64_t j, V8 c, uint8_t* o) const {
    const D8 d8;
    const size_t N = hn::Lanes(d8);
    const V8 r3 = Unpack3(LoadBlocks<6>(d8, x.s.high + 3 * j / 8));
    const V8 lo = x.zip(hn::LoadU(d8, x.s.res + j));
    const V8 hi = x.zip(JoinE5(x, c, r3));
    hn::StoreU(hn::InterleaveLower(d8, lo, hi), d8, o);
    hn::StoreU(hn::InterleaveUpper(d8, lo, hi), d8, o + N);
  }
};

struct Fp8Block {
  static bool Fits(const DecodeCtx& x, uint64_t j) { return Fits3(x, j); }
  HWY_INLINE void Run(const DecodeCtx& x, uint64_t j, V8 c, uint8_t* o) const {
    const D8 d8;
    const V8 r3 = Unpack3(LoadBlocks<6>(d8, x.s.high + 3 * j / 8));
    hn::StoreU(JoinE5(x, c, r3), d8, o);
  }
};

struct Fp32Block {
  // The last of the four residual loads reads 16 bytes at 12-byte steps.
  static bool Fits(const DecodeCtx& x, uint64_t j) {
    return x.s.res + 3 * (j + hn::Lanes(D8())) + 4 <= x.s.end;
  }
  HWY_INLINE void Run(const DecodeCtx& x, uint64_t j, V8 c, uint8_t* o) const {
    const D8 d8;
    const D32 d32;
    const size_t N32 = hn::Lanes(d32);
    const hn::Half<D8> dh;
    const hn::Half<decltype(dh)> dq;
    // Per u32 lane: residual bytes 0, 1, 2 and byte 2 again (its bit 7 is
    // the sign, moved to bit 31 by the mask below).
    alignas(16) static constexpr uint8_t kSpread[16] = {0, 1, 2, 2, 3, 4, 5, 5,
                                                        6, 7, 8, 8, 9, 10, 11, 11};
    const V8 spread = hn::LoadDup128(d8, kSpread);
    const V8 e = hn::TableLookupBytes(x.exp, c);
    const auto e_lo = hn::LowerHalf(dh, e);
    const auto e_hi = hn::UpperHalf(dh, e);
    const hn::Vec<decltype(dq)> q[4] = {hn::LowerHalf(dq, e_lo), hn::UpperHalf(dq, e_lo),
                                        hn::LowerHalf(dq, e_hi), hn::UpperHalf(dq, e_hi)};
    for (size_t k = 0; k < 4; ++k) {
      const uint64_t i = j + k * N32;
      const V8 rb = LoadBlocks<12>(d8, x.s.res + 3 * i);
      const auto r = hn::And(hn::BitCast(d32, hn::TableLookupBytes(rb, spread)),
                             hn::Set(d32, 0x807FFFFFu));
      const auto v = hn::Or(r, hn::ShiftLeft<23>(hn::PromoteTo(d32, q[k])));
      hn::StoreU(hn::BitCast(d8, v), d8, o + 4 * k * N32);
    }
  }
};

// The block of each dtype the nibble codec takes (DecodeRange); a new one
// without a block does not compile.
template <class T>
struct DecBlockOf;
template <>
struct DecBlockOf<Bf16Traits> { using type = Bf16Block; };
template <>
struct DecBlockOf<Fp16Traits> { using type = Fp16Block; };
template <>
struct DecBlockOf<Fp32Traits> { using type = Fp32Block; };
template <>
struct DecBlockOf<Fp8E5M2Traits> { using type = Fp8Block; };

// Elements per sub-block. A sub-block is decoded into L1 (a bounce buffer
// when streaming, else its place in dst), its escapes are patched there,
// and a streamed sub-block is then copied out with non-temporal stores.
// So the loop has no per-vector escape branch (mispredicts there throw away
// the loads in flight).
constexpr uint64_t kSub = 1024;

// With a FusedXxh3, the sub-blocks below `hashed_end` (whole checksum
// blocks from `begin`) are hashed by it, from L1, instead of `tap`.
template <class Traits, bool kStream, class Block, class Hash = NoHash>
HWY_INLINE uint32_t DecodeLoop(const DecodeCtx& x, const Block& block, uint64_t begin, uint64_t end,
                               const DecodeTables& t, const EscapeList& esc, const OutputTap& tap,
                               uint8_t* dst, Hash* hash = nullptr, uint64_t hashed_end = 0) {
  const D8 d8;
  const size_t N = hn::Lanes(d8);
  constexpr uint64_t B = Traits::kBytes;
  V8 max_code = hn::Zero(d8);
  uint32_t m = 0;
  uint64_t e = 0;  // next escape
  alignas(HWY_MAX_BYTES) uint8_t bounce[kStream ? kSub * B : 1];
  for (uint64_t i = begin; i < end;) {
    const uint64_t first = i;
    const uint64_t lim = end - first < kSub ? end : first + kSub;
    uint8_t* out = kStream ? bounce : dst + first * B;
    for (; i + N <= lim && Block::Fits(x, i); i += N) {
      if constexpr (std::is_same<Traits, Bf16Traits>::value) {
        hwy::Prefetch(x.s.res + i + kDecodePrefetchAhead);
        hwy::Prefetch(x.s.codes + (i + kDecodePrefetchAhead) / 2);
      }
      const V8 c = UnpackNibbles(x.s.codes + i / 2);
      max_code = hn::Max(max_code, c);
      block.Run(x, i, c, out + (i - first) * B);
    }
    if (i < lim) {  // the range's tail, or loads would pass the frame end
      const uint32_t ms = decode_scalar<Traits>(x.s, i, lim, t, out + (i - first) * B);
      m = ms > m ? ms : m;
      i = lim;
    }
    for (; e < esc.count && esc.idx[e] < lim; ++e) patch_bits<Traits>(out, esc.idx[e] - first, esc.exp[e]);
    // The final bytes, still in L1.
    if (Hash::kOn && lim <= hashed_end) {
      hash->FeedBytes(out, first * B, (lim - first) * B);
    } else if (tap.fn != nullptr) {
      tap.fn(tap.ctx, first * B, out, (lim - first) * B);
    }
    if (kStream) {
      const uint64_t bytes = (lim - first) * B;
      uint64_t k = 0;
      for (; k + N <= bytes; k += N) StoreOut<true>(hn::Load(d8, bounce + k), dst + first * B + k);
      std::memcpy(dst + first * B + k, bounce + k, bytes - k);
    }
  }
  alignas(HWY_MAX_BYTES) uint8_t lanes[HWY_MAX_BYTES];
  hn::Store(max_code, d8, lanes);
  for (size_t k = 0; k < N; ++k) m = lanes[k] > m ? lanes[k] : m;
  return m;
}

template <class Traits, class Block, class Hash = NoHash>
uint32_t DecodeTyped(const ConstStreams& s, uint64_t begin, uint64_t end, const DecodeTables& t,
                     const EscapeList& esc, const OutputTap& tap, uint8_t* dst, Hash* hash = nullptr,
                     uint64_t hashed_end = 0) {
  const D8 d8;
  const DecodeCtx x{s, hn::LoadDup128(d8, t.exp), hn::LoadDup128(d8, t.lo), hn::LoadDup128(d8, t.hi),
                    ZipOrder()};
  const Block block;
  if (s.stream && reinterpret_cast<uintptr_t>(dst + begin * Traits::kBytes) % 16 == 0)
    return DecodeLoop<Traits, true>(x, block, begin, end, t, esc, tap, dst, hash, hashed_end);
  return DecodeLoop<Traits, false>(x, block, begin, end, t, esc, tap, dst, hash, hashed_end);
}

// Sub-blocks of every dtype (1 to 4 bytes an element) tile checksum blocks
// and are whole 1 KiB hash blocks (FusedXxh3::FeedBytes).
static_assert(kChecksumBlockBytes % (kSub * 4) == 0 && kSub % 1024 == 0, "sub-blocks tile checksum blocks");

// Whole checksum blocks from `begin` on, up to `mid`, are hashed in the
// loop from L1 (the tap sees the rest).
template <class Traits, class Block>
uint32_t DecodeHashed(const ConstStreams& s, uint64_t begin, uint64_t mid, uint64_t end, const DecodeTables& t,
                      const EscapeList& esc, const OutputTap& tap, uint8_t* dst, uint64_t last_end) {
  FusedXxh3 hash(tap.hashes);
  hash.last_end = last_end;
  return DecodeTyped<Traits, Block>(s, begin, end, t, esc, tap, dst, &hash, mid);
}

template <class Traits, class Block>
uint32_t DecodeDtype(const ConstStreams& s, uint64_t begin, uint64_t end, const DecodeTables& t,
                     const EscapeList& esc, const OutputTap& tap, uint8_t* dst) {
  constexpr uint64_t kPer = kChecksumBlockBytes / Traits::kBytes;  // elements per checksum block
  if constexpr (kFusedHash) {
    if (tap.hashes != nullptr && begin % kPer == 0) {
      // Whole blocks, and the output's shorter last block when it is whole
      // KiB (pages of 32 KiB).
      const uint64_t mid = begin + (end - begin) / kPer * kPer;
      const uint64_t bytes = end * Traits::kBytes;
      const bool last = bytes == tap.total && (end - mid) * Traits::kBytes % 1024 == 0;
      if (last || mid > begin)
        return DecodeHashed<Traits, Block>(s, begin, last ? end : mid, end, t, esc, tap, dst, last ? bytes : 0);
    }
  }
  return DecodeTyped<Traits, Block>(s, begin, end, t, esc, tap, dst);
}

uint32_t DecodeRange(Dtype dtype, const ConstStreams& s, uint64_t begin, uint64_t end,
                     const DecodeTables& t, const EscapeList& esc, const OutputTap& tap, void* dst_v) {
  auto* dst = static_cast<uint8_t*>(dst_v);
  // The nibble codec's dtypes (core/codec.h); the others have codecs of their own.
  uint32_t m = 0;
  visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(dtype), [&](auto tr) {
    using T = decltype(tr);
    m = DecodeDtype<T, typename DecBlockOf<T>::type>(s, begin, end, t, esc, tap, dst);
  });
  return m;
}

#else  // HWY_SCALAR

template <class Traits>
uint32_t DecodeScalarPatched(const ConstStreams& s, uint64_t begin, uint64_t end, const DecodeTables& t,
                             const EscapeList& esc, const OutputTap& tap, uint8_t* dst) {
  const uint32_t m = decode_scalar<Traits>(s, begin, end, t, dst + begin * Traits::kBytes);
  for (uint64_t e = 0; e < esc.count; ++e) patch_bits<Traits>(dst, esc.idx[e], esc.exp[e]);
  if (tap.fn != nullptr) tap.fn(tap.ctx, begin * Traits::kBytes, dst + begin * Traits::kBytes, (end - begin) * Traits::kBytes);
  return m;
}

uint32_t DecodeRange(Dtype dtype, const ConstStreams& s, uint64_t begin, uint64_t end,
                     const DecodeTables& t, const EscapeList& esc, const OutputTap& tap, void* dst_v) {
  auto* dst = static_cast<uint8_t*>(dst_v);
  uint32_t m = 0;
  visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(dtype), [&](auto tr) {
    m = DecodeScalarPatched<decltype(tr)>(s, begin, end, t, esc, tap, dst);
  });
  return m;
}

#endif  // HWY_TARGET != HWY_SCALAR

int64_t DecodeTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_DECODE_INL_H_
