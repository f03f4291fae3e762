/* SPDX-License-Identifier: Apache-2.0 */
// Vector helpers shared by the CPU kernels, compiled once per Highway target
// (included from the *-inl.h kernel files inside HWY_NAMESPACE). Not used by
// the HWY_SCALAR target, which runs cpu/scalar_kernels.h instead.
#if defined(SPLITZIP_CPU_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_SIMD_INL_H_
#undef SPLITZIP_CPU_SIMD_INL_H_
#else
#define SPLITZIP_CPU_SIMD_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "cpu/kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

using D8 = hn::ScalableTag<uint8_t>;
using D16 = hn::Repartition<uint16_t, D8>;
using D32 = hn::Repartition<uint32_t, D8>;
using D64 = hn::Repartition<uint64_t, D8>;
using V8 = hn::Vec<D8>;
using M8 = hn::Mask<D8>;

// Bytes per 128-bit block and blocks per vector.
constexpr size_t kBlocks = hn::MaxLanes(D8()) / 16;

// Window lookup index: x = e - base. Inside the window (x < 16) the index is
// x; outside it must make TableLookupBytesOr0 return 0. x86's pshufb zeroes
// for bit 7 and ignores bits 4..6, so one saturating add does it there
// (not on EMU128, which zeroes any index >= 16).
HWY_INLINE V8 WindowIndex(V8 x) {
  const D8 d;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  return hn::SaturatedAdd(x, hn::Set(d, 0x70));
#else
  return hn::IfThenElse(hn::Lt(x, hn::Set(d, 16)), x, hn::Set(d, 0x80));
#endif
}

// Exponent bytes -> code+1, or 0 for an escape. kW windows (0: runtime count).
template <size_t kW>
class CodeLookup {
 public:
  explicit CodeLookup(const EncodeTables& t) : n_(kW ? kW : t.windows) {
    const D8 d;
    for (size_t w = 0; w < n_; ++w) {
      base_[w] = hn::Set(d, t.base[w]);
      lut_[w] = hn::LoadDup128(d, t.lut[w]);
    }
  }
  HWY_INLINE V8 operator()(V8 e) const {
    V8 t = hn::TableLookupBytesOr0(lut_[0], WindowIndex(hn::Sub(e, base_[0])));
    for (size_t w = 1; w < (kW ? kW : n_); ++w)
      t = hn::Or(t, hn::TableLookupBytesOr0(lut_[w], WindowIndex(hn::Sub(e, base_[w]))));
    return t;
  }

 private:
  size_t n_;
  V8 base_[kW ? kW : 16];
  V8 lut_[kW ? kW : 16];
};

// Calls f(lookup) with the CodeLookup specialised for the window count.
template <class F>
HWY_INLINE void WithLookup(const EncodeTables& t, F&& f) {
  switch (t.windows) {
    case 1: f(CodeLookup<1>(t)); break;
    case 2: f(CodeLookup<2>(t)); break;
    case 3: f(CodeLookup<3>(t)); break;
    default: f(CodeLookup<0>(t)); break;
  }
}

// The mask as an integer, lane i at bit i. Reads back exactly the bytes
// StoreMaskBits wrote, so the load is forwarded from that store.
HWY_INLINE uint64_t MaskBits(M8 mask) {
  const D8 d;
  constexpr size_t kBytes = (hn::MaxLanes(D8()) + 7) / 8;
  static_assert(kBytes == 2 || kBytes == 4 || kBytes == 8, "16, 32 or 64 byte lanes expected");
  uint8_t bits[8];
  hn::StoreMaskBits(d, mask, bits);
  if constexpr (kBytes >= 8) {
    uint64_t v;
    std::memcpy(&v, bits, 8);
    return v;
  } else if constexpr (kBytes == 4) {
    uint32_t v;
    std::memcpy(&v, bits, 4);
    return v;
  } else {
    uint16_t v;
    std::memcpy(&v, bits, 2);
    return v;
  }
}

// Nibble-packs two vectors of codes (element order) into one vector of code
// bytes: element 2j low nibble, 2j+1 high nibble.
HWY_INLINE V8 PackNibbles(V8 c0, V8 c1) {
  const D8 d8;
  const D16 d16;
  const auto w0 = hn::BitCast(d16, c0);
  const auto w1 = hn::BitCast(d16, c1);
  const auto p0 = hn::Or(w0, hn::ShiftRight<4>(w0));  // low byte = lo | hi << 4
  const auto p1 = hn::Or(w1, hn::ShiftRight<4>(w1));
  return hn::ConcatEven(d8, hn::BitCast(d8, p1), hn::BitCast(d8, p0));
}

// Lanes(D8) codes in element order from Lanes(D8)/2 code bytes.
HWY_INLINE V8 UnpackNibbles(const uint8_t* codes) {
  const D8 d8;
  const D16 d16;
  const hn::Half<D8> dh;
  const auto w = hn::PromoteTo(d16, hn::LoadU(dh, codes));
  const auto c = hn::Or(hn::And(w, hn::Set(d16, 0x000F)),
                        hn::And(hn::ShiftLeft<4>(w), hn::Set(d16, 0x0F00)));
  return hn::BitCast(d8, c);
}

// Qword permutation after which InterleaveLower/Upper of two byte vectors
// yield whole-vector order (they work per 128-bit block).
class ZipOrder {
 public:
  ZipOrder() {
#if HWY_TARGET <= HWY_AVX2 && HWY_ARCH_X86
    alignas(64) uint64_t idx[hn::MaxLanes(D64())];
    for (size_t b = 0; b < kBlocks; ++b) {
      idx[2 * b] = b;
      idx[2 * b + 1] = kBlocks + b;
    }
    idx_ = hn::SetTableIndices(D64(), idx);
#endif
  }
  HWY_INLINE V8 operator()(V8 v) const {
#if HWY_TARGET <= HWY_AVX2 && HWY_ARCH_X86
    const D8 d8;
    const D64 d64;
    return hn::BitCast(d8, hn::TableLookupLanes(hn::BitCast(d64, v), idx_));
#else
    static_assert(kBlocks == 1, "ZipOrder needs a qword permutation here");
    return v;
#endif
  }

 private:
#if HWY_TARGET <= HWY_AVX2 && HWY_ARCH_X86
  decltype(hn::SetTableIndices(D64(), static_cast<const uint64_t*>(nullptr))) idx_;
#endif
};

// Non-temporal store of v at p (16-byte aligned at least): whole vectors
// where p allows, else 128-bit pieces.
template <class D>
HWY_INLINE void StreamAligned(D d, hn::Vec<D> v, uint8_t* p) {
  if constexpr (hn::MaxLanes(D()) <= 16) {
    hn::Stream(v, d, p);
  } else {
    if (reinterpret_cast<uintptr_t>(p) % hn::MaxLanes(D()) == 0) {
      hn::Stream(v, d, p);
    } else {
      const hn::Half<D> dh;
      StreamAligned(dh, hn::LowerHalf(dh, v), p);
      StreamAligned(dh, hn::UpperHalf(dh, v), p + hn::MaxLanes(D()) / 2);
    }
  }
}

template <bool kStream>
HWY_INLINE void StoreOut(V8 v, uint8_t* p) {
  if constexpr (kStream) {
    StreamAligned(D8(), v, p);
  } else {
    hn::StoreU(v, D8(), p);
  }
}

// Stores bytes 0..kStride-1 of each 128-bit block k at p + kStride*k. Each
// block is written as 16 bytes in increasing order, so the bytes past the
// used part are overwritten by the next block; the last block writes
// 16 - kStride bytes past the end (see StoreBlocksExact).
template <size_t kStride, class D>
HWY_INLINE void StoreBlocksOverlap(D d, hn::Vec<D> v, uint8_t* p) {
  if constexpr (hn::MaxLanes(D()) <= 16) {
    hn::StoreU(v, d, p);
  } else {
    const hn::Half<D> dh;
    StoreBlocksOverlap<kStride>(dh, hn::LowerHalf(dh, v), p);
    StoreBlocksOverlap<kStride>(dh, hn::UpperHalf(dh, v), p + kStride * (hn::MaxLanes(D()) / 32));
  }
}

// As StoreBlocksOverlap, writing exactly kStride bytes per block.
template <size_t kStride>
HWY_INLINE void StoreBlocksExact(V8 v, uint8_t* p) {
  alignas(HWY_MAX_BYTES) uint8_t tmp[HWY_MAX_BYTES];
  hn::Store(v, D8(), tmp);
  for (size_t b = 0; b < kBlocks; ++b) std::memcpy(p + kStride * b, tmp + 16 * b, kStride);
}

// Block k of the result holds the 16 bytes at p + kStride*k (reads
// 16 - kStride bytes past the last used byte).
template <size_t kStride, class D>
HWY_INLINE hn::Vec<D> LoadBlocks(D d, const uint8_t* p) {
  if constexpr (hn::MaxLanes(D()) <= 16) {
    return hn::LoadU(d, p);
  } else {
    const hn::Half<D> dh;
    const auto lo = LoadBlocks<kStride>(dh, p);
    const auto hi = LoadBlocks<kStride>(dh, p + kStride * (hn::MaxLanes(D()) / 32));
    return hn::Combine(d, hi, lo);
  }
}

// 3-bit parts (bytes < 8, element order) -> per block, the 6 packed bytes
// of its 16 elements at the block start (FORMAT.md 2, LSB-first).
HWY_INLINE V8 Pack3(V8 b) {
  const D8 d8;
  const D16 d16;
  const D32 d32;
  const D64 d64;
  const auto x = hn::BitCast(d16, b);  // e0 | e1 << 8
  const auto y = hn::And(hn::Or(x, hn::ShiftRight<5>(x)), hn::Set(d16, 0x3F));
  const auto y32 = hn::BitCast(d32, y);  // 6 bits | 6 bits << 16
  const auto z = hn::And(hn::Or(y32, hn::ShiftRight<10>(y32)), hn::Set(d32, 0xFFF));
  const auto z64 = hn::BitCast(d64, z);  // 12 bits | 12 bits << 32
  const auto w = hn::And(hn::Or(z64, hn::ShiftRight<20>(z64)), hn::Set(d64, 0xFFFFFF));
  alignas(16) static constexpr uint8_t kGather[16] = {0, 1, 2, 8, 9, 10, 0x80, 0x80,
                                                      0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  return hn::TableLookupBytesOr0(hn::BitCast(d8, w), hn::LoadDup128(d8, kGather));
}

// Inverse of Pack3: block k of `packed` starts with the 6 bytes of its 16
// elements (LoadBlocks<6>). Returns bytes < 8 in element order.
HWY_INLINE V8 Unpack3(V8 packed) {
  const D8 d8;
  const D16 d16;
  // u16 lane j (elements 2j, 2j+1) needs bits 6j..6j+5: bytes (6j)/8 and
  // (6j)/8 + 1, then a shift by 6j mod 8 done as a multiply that moves
  // those 6 bits to the top (bits 10..15).
  alignas(16) static constexpr uint8_t kGather[16] = {0, 1, 0, 1, 1, 2, 2, 3,
                                                      3, 4, 3, 4, 4, 5, 5, 0x80};
  alignas(16) static constexpr uint16_t kMul[8] = {1024, 16, 64, 256, 1024, 16, 64, 256};
  const auto x = hn::BitCast(d16, hn::TableLookupBytesOr0(packed, hn::LoadDup128(d8, kGather)));
  const auto m = hn::Mul(x, hn::LoadDup128(d16, kMul));
  const auto e0 = hn::And(hn::ShiftRight<10>(m), hn::Set(d16, 0x0007));
  const auto e1 = hn::And(hn::ShiftRight<5>(m), hn::Set(d16, 0x0700));
  return hn::BitCast(d8, hn::Or(e0, e1));
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_SIMD_INL_H_
