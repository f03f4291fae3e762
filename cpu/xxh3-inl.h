/* SPDX-License-Identifier: Apache-2.0 */
// Per-target XXH3-64 of checksum blocks on vectors (shared by the bf16
// encode kernel and the fast-mode decode kernels).
#if defined(SPLITZIP_CPU_XXH3_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPLITZIP_CPU_XXH3_INL_H_
#undef SPLITZIP_CPU_XXH3_INL_H_
#else
#define SPLITZIP_CPU_XXH3_INL_H_
#endif

#include "core/hash.h"
#include "core/xxh_device.h"
#include "cpu/kernels.h"
#include "cpu/scalar_kernels.h"
#include "cpu/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace splitzip {
namespace cpu {
namespace HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

// XXH3-64 of checksum blocks (64 KiB, or a shorter last one of whole KiB),
// computed on vectors a kernel already holds: the bf16 encoder's loaded
// input, the decoder's final output still in L1 (FORMAT.md 4.5; the algorithm as in
// core/xxh_device.h xxh3_long for len = 65536: 63 scrambled 1 KiB blocks,
// then 15 stripes, the last stripe = bytes [65472, 65536) with the secret at
// 121, and merge). A stripe's 8 words are u64 lanes: acc[i ^ 1] += w[i];
// acc[i] += lo32(w[i] ^ key[i]) * hi32(w[i] ^ key[i]). Fixed-size vectors
// of 16..64 bytes only (an array of accumulator vectors); other targets
// leave the hashing to the caller (libxxhash).
#if HWY_ARCH_X86 || HWY_TARGET == HWY_EMU128
constexpr bool kFusedHash = hn::MaxLanes(D8()) >= 16 && hn::MaxLanes(D8()) <= 64;
#else
constexpr bool kFusedHash = false;
#endif

// Secret words by the word's position in a 1 KiB block (w = 8 * stripe +
// lane: byte offset 8 * stripe + 8 * lane), then the last stripe's (offset
// 121), the scramble's (offset 128) and the accumulators' start values.
struct Xxh3Tables {
  uint64_t key[128];
  uint64_t last[8];
  uint64_t scramble[8];
  uint64_t init[8];
};
constexpr uint64_t SecretWord(uint32_t off) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; --b) v = (v << 8) | dev::kXxh3SecretHost[off + static_cast<uint32_t>(b)];
  return v;
}
constexpr Xxh3Tables MakeXxh3Tables() {
  Xxh3Tables t{};
  for (uint32_t w = 0; w < 128; ++w) t.key[w] = SecretWord(8 * (w / 8) + 8 * (w % 8));
  for (uint32_t i = 0; i < 8; ++i) {
    t.last[i] = SecretWord(dev::kXxh3SecretSize - 64 - 7 + 8 * i);
    t.scramble[i] = SecretWord(dev::kXxh3SecretSize - 64 + 8 * i);
  }
  const uint64_t init[8] = {dev::XxhPrimes::P32_3, dev::XxhPrimes::P64_1, dev::XxhPrimes::P64_2,
                            dev::XxhPrimes::P64_3, dev::XxhPrimes::P64_4, dev::XxhPrimes::P32_2,
                            dev::XxhPrimes::P64_5, dev::XxhPrimes::P32_1};
  for (uint32_t i = 0; i < 8; ++i) t.init[i] = init[i];
  return t;
}
alignas(64) static constexpr Xxh3Tables kXxh3 = MakeXxh3Tables();
static_assert(kChecksumBlockBytes == 65536, "the fused hash is written for 64 KiB blocks");

// No hashing (the plain loop).
struct NoHash {
  static constexpr bool kOn = false;
  HWY_INLINE void Feed(V8, V8, V8, V8, uint64_t) {}
  HWY_INLINE void After(uint64_t, const uint8_t*) {}
  HWY_INLINE void FeedBytes(const uint8_t*, uint64_t, uint64_t) {}
};

struct FusedXxh3 {
  static constexpr bool kOn = true;
  static constexpr size_t kBytes = hn::MaxLanes(D8());  // bytes per vector
  static constexpr size_t kAcc = 64 / kBytes;           // vectors per stripe
  static constexpr size_t kL = kBytes / 8;               // u64 lanes per vector
  using V64 = hn::Vec<D64>;

  uint64_t* hashes;  // block hash slots of the frame
  V64 acc[kAcc];
  // Feed's word terms, swapped into acc once per 1 KiB block (After).
  V64 words[kAcc];
  // Where a shorter last checksum block ends (a multiple of 1 KiB), if the
  // kernel hashes it; else 0.
  uint64_t last_end = 0;

  explicit FusedXxh3(uint64_t* h) : hashes(h) {
    Reset();
    for (size_t q = 0; q < kAcc; ++q) words[q] = hn::Zero(D64());
  }

  HWY_INLINE void Reset() {
    for (size_t q = 0; q < kAcc; ++q) acc[q] = hn::Load(D64(), kXxh3.init + q * kL);
  }
  HWY_INLINE static V64 Mul32(V64 a, V64 b) {  // lo32(a) * lo32(b), 64-bit
    const D32 d32;
    return hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, b));
  }
  HWY_INLINE void Stripe(V8 v8, const uint64_t* key, size_t q) {
    const D64 d64;
    const V64 v = hn::BitCast(d64, v8);
    const V64 k = hn::Xor(v, hn::Load(d64, key));
    acc[q] = hn::Add(acc[q], Mul32(k, hn::ShiftRight<32>(k)));
    words[q] = hn::Add(words[q], v);
  }
  // The four input vectors of one loop step at byte offset off (a multiple
  // of 4 * kBytes, so vector q is accumulator vector q % kAcc).
  HWY_INLINE void Feed(V8 a0, V8 a1, V8 a2, V8 a3, uint64_t off) {
    const uint64_t* key = kXxh3.key + (off & 1023) / 8;
    Stripe(a0, key, 0);
    Stripe(a1, key + kL, 1 % kAcc);
    Stripe(a2, key + 2 * kL, 2 % kAcc);
    Stripe(a3, key + 3 * kL, 3 % kAcc);
  }
  // After the step that ends at byte offset pos (its bytes end at p, a
  // block's last stripe is p - 64): scramble at a 1 KiB boundary, finish
  // the block at a 64 KiB one.
  HWY_INLINE void After(uint64_t pos, const uint8_t* p) {
    if ((pos & 1023) != 0) return;
    for (size_t q = 0; q < kAcc; ++q) {
      acc[q] = hn::Add(acc[q], hn::Shuffle01(words[q]));
      words[q] = hn::Zero(D64());
    }
    if ((pos & (kChecksumBlockBytes - 1)) != 0 && pos != last_end) {
      Scramble();
    } else {
      Finish(pos, p - 64);
    }
  }
  // Whole 1 KiB blocks [off, off + bytes) at p, off a multiple of 1 KiB,
  // continuing the checksum block (the decoder's output, read back from
  // L1). A block's 16 stripes add into locals, so the accumulators stay in
  // registers; the word terms (acc[i ^ 1] += w[i]) are summed apart and
  // swapped once per block instead of once per stripe.
  HWY_INLINE void FeedBytes(const uint8_t* p, uint64_t off, uint64_t bytes) {
    const D8 d8;
    const D64 d64;
    for (uint64_t k = 0; k < bytes; k += 1024) {
      const uint8_t* b = p + k;
      V64 prod[kAcc], words[kAcc];
      for (size_t q = 0; q < kAcc; ++q) {
        prod[q] = acc[q];
        words[q] = hn::Zero(d64);
      }
      // Stripe by stripe, so the inner loop unrolls early and prod / words
      // become registers; a full unroll only with 32 vector registers.
      const auto stripe = [&](size_t st) HWY_ATTR {
        for (size_t q = 0; q < kAcc; ++q) {
          const V64 w = hn::BitCast(d64, hn::LoadU(d8, b + 64 * st + q * kBytes));
          const V64 x = hn::Xor(w, hn::Load(d64, kXxh3.key + 8 * st + q * kL));
          prod[q] = hn::Add(prod[q], Mul32(x, hn::ShiftRight<32>(x)));
          words[q] = hn::Add(words[q], w);
        }
      };
      if constexpr (kAcc == 1) {
        HWY_UNROLL(16)
        for (size_t st = 0; st < 16; ++st) stripe(st);
      } else {
        HWY_UNROLL(2)
        for (size_t st = 0; st < 16; ++st) stripe(st);
      }
      for (size_t q = 0; q < kAcc; ++q) acc[q] = hn::Add(prod[q], hn::Shuffle01(words[q]));
      After(off + k + 1024, b + 1024);
    }
  }
  HWY_INLINE void Scramble() {
    const D64 d64;
    const V64 prime = hn::Set(d64, dev::XxhPrimes::P32_1);
    for (size_t q = 0; q < kAcc; ++q) {
      V64 v = acc[q];
      v = hn::Xor(v, hn::ShiftRight<47>(v));
      v = hn::Xor(v, hn::Load(d64, kXxh3.scramble + q * kL));
      acc[q] = hn::Add(Mul32(v, prime), hn::ShiftLeft<32>(Mul32(hn::ShiftRight<32>(v), prime)));
    }
  }
  // The accumulators go to memory only here, so a kernel keeps them (and
  // words) in registers across its loop.
  HWY_INLINE void Finish(uint64_t pos, const uint8_t* p) {
    alignas(64) uint64_t a[8];
    for (size_t q = 0; q < kAcc; ++q) hn::Store(acc[q], D64(), a + q * kL);
    const uint64_t block = (pos - 1) >> kChecksumBlockLog2;
    hashes[block] = Merge(a, p, pos - (block << kChecksumBlockLog2));
    Reset();
  }
  // A block of len bytes, a multiple of 1 KiB: XXH3's stripes and
  // scrambles are then those of a 64 KiB block, cut short.
  static HWY_NOINLINE uint64_t Merge(const uint64_t* acc_words, const uint8_t* p, uint64_t len) {
    dev::Xxh3Acc a;
    for (uint32_t i = 0; i < 8; ++i) a.a[i] = acc_words[i];
    // The last stripe was added with the secret at 120; XXH3 uses 121.
    // Only its product term depends on the key, and the sum is mod 2^64.
    for (uint32_t i = 0; i < 8; ++i) {
      const uint64_t w = load_le64(p + 8 * i);
      const uint64_t k0 = w ^ kXxh3.key[120 + i];
      const uint64_t k1 = w ^ kXxh3.last[i];
      a.a[i] += (k1 & 0xFFFFFFFFull) * (k1 >> 32) - (k0 & 0xFFFFFFFFull) * (k0 >> 32);
    }
    return a.merge(len);
  }
};

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace splitzip
HWY_AFTER_NAMESPACE();

#endif  // SPLITZIP_CPU_XXH3_INL_H_
