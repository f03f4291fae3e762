/* SPDX-License-Identifier: Apache-2.0 */
// XXH64 and XXH3-64 (seed 0, default secret) written for device code: plain
// integer arithmetic, no tables beyond the secret, no host library. Host code
// hashes with libxxhash (core/hash.h); tests/core/test_hash.cpp proves these
// equal libxxhash on every length 0..4096 and on random inputs.
#pragma once

#include <cstdint>

#include "core/le_bytes.h"

namespace splitzip {
namespace dev {

struct XxhPrimes {
  static constexpr uint64_t P64_1 = 0x9E3779B185EBCA87ull;
  static constexpr uint64_t P64_2 = 0xC2B2AE3D27D4EB4Full;
  static constexpr uint64_t P64_3 = 0x165667B19E3779F9ull;
  static constexpr uint64_t P64_4 = 0x85EBCA77C2B2AE63ull;
  static constexpr uint64_t P64_5 = 0x27D4EB2F165667C5ull;
  static constexpr uint32_t P32_1 = 0x9E3779B1u;
  static constexpr uint32_t P32_2 = 0x85EBCA77u;
  static constexpr uint32_t P32_3 = 0xC2B2AE3Du;
};

SZ_HD uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// ---------------------------------------------------------------- XXH64
// Format v1 uses it (header check, content checksum); v2 does not.
SZ_HD uint64_t xxh64_round(uint64_t acc, uint64_t input) {
  acc += input * XxhPrimes::P64_2;
  acc = rotl64(acc, 31);
  return acc * XxhPrimes::P64_1;
}
SZ_HD uint64_t xxh64_merge(uint64_t acc, uint64_t v) {
  acc ^= xxh64_round(0, v);
  return acc * XxhPrimes::P64_1 + XxhPrimes::P64_4;
}
// Lane l (0..3) of the 32-byte stripes: four independent serial chains.
SZ_HD uint64_t xxh64_lane(const uint8_t* p, uint64_t size, uint32_t lane) {
  constexpr uint64_t init[4] = {XxhPrimes::P64_1 + XxhPrimes::P64_2, XxhPrimes::P64_2, 0,
                                0 - XxhPrimes::P64_1};
  uint64_t acc = init[lane & 3u];
  const uint64_t stripes = size >> 5;
  for (uint64_t s = 0; s < stripes; ++s) acc = xxh64_round(acc, load_le64(p + 32 * s + 8 * lane));
  return acc;
}
SZ_HD uint64_t xxh64_combine(const uint64_t v[4]) {
  uint64_t h = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
  for (int i = 0; i < 4; ++i) h = xxh64_merge(h, v[i]);
  return h;
}
// Tail and avalanche; h = combined lanes (size >= 32) or P5 (size < 32).
SZ_HD uint64_t xxh64_finish(uint64_t h, const uint8_t* p, uint64_t size) {
  h += size;
  uint64_t rem = size & 31u;
  for (; rem >= 8; rem -= 8, p += 8) {
    h ^= xxh64_round(0, load_le64(p));
    h = rotl64(h, 27) * XxhPrimes::P64_1 + XxhPrimes::P64_4;
  }
  if (rem >= 4) {
    h ^= uint64_t{load_le32(p)} * XxhPrimes::P64_1;
    h = rotl64(h, 23) * XxhPrimes::P64_2 + XxhPrimes::P64_3;
    p += 4;
    rem -= 4;
  }
  for (; rem > 0; --rem, ++p) {
    h ^= uint64_t{*p} * XxhPrimes::P64_5;
    h = rotl64(h, 11) * XxhPrimes::P64_1;
  }
  h ^= h >> 33;
  h *= XxhPrimes::P64_2;
  h ^= h >> 29;
  h *= XxhPrimes::P64_3;
  h ^= h >> 32;
  return h;
}
SZ_HD uint64_t xxh64(const uint8_t* p, uint64_t size) {
  uint64_t h = XxhPrimes::P64_5;
  if (size >= 32) {
    uint64_t v[4];
    for (uint32_t l = 0; l < 4; ++l) v[l] = xxh64_lane(p, size, l);
    h = xxh64_combine(v);
  }
  return xxh64_finish(h, p + (size & ~uint64_t{31}), size);
}

// ---------------------------------------------------------------- XXH3-64
// The default 192-byte secret of XXH3 (a published constant of the format).
// The default 192-byte secret of XXH3 (a published constant of the format).
#define SZ_XXH3_SECRET_BYTES                                                                     \
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, \
      0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, \
      0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, \
      0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, \
      0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, \
      0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, \
      0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, \
      0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, \
      0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, \
      0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, \
      0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, \
      0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e

inline constexpr uint32_t kXxh3SecretSize = 192;
#if defined(__CUDACC__)
// Device code reads its own per-translation-unit constant-memory copy.
static __constant__ const uint8_t kXxh3SecretDevice[kXxh3SecretSize] = {SZ_XXH3_SECRET_BYTES};
#endif
inline constexpr uint8_t kXxh3SecretHost[kXxh3SecretSize] = {SZ_XXH3_SECRET_BYTES};

// Secret word at byte offset `off` (any alignment).
SZ_HD uint64_t secret64(uint32_t off) {
#if defined(__CUDA_ARCH__)
  const uint8_t* s = kXxh3SecretDevice;
#else
  const uint8_t* s = kXxh3SecretHost;
#endif
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | s[off + static_cast<uint32_t>(i)];
  return v;
}
SZ_HD uint32_t secret32(uint32_t off) { return static_cast<uint32_t>(secret64(off)); }

SZ_HD uint64_t mul128_fold64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return (a * b) ^ __umul64hi(a, b);
#else
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
#endif
}
SZ_HD uint64_t xxh3_avalanche(uint64_t h) {
  h ^= h >> 37;
  h *= 0x165667919E3779F9ull;
  return h ^ (h >> 32);
}
SZ_HD uint64_t xxh64_avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= XxhPrimes::P64_2;
  h ^= h >> 29;
  h *= XxhPrimes::P64_3;
  return h ^ (h >> 32);
}
SZ_HD uint64_t xxh3_rrmxmx(uint64_t h, uint64_t len) {
  h ^= rotl64(h, 49) ^ rotl64(h, 24);
  h *= 0x9FB21C651E98DF25ull;
  h ^= (h >> 35) + len;
  h *= 0x9FB21C651E98DF25ull;
  return h ^ (h >> 28);
}
SZ_HD uint64_t xxh3_mix16(const uint8_t* p, uint32_t s) {
  return mul128_fold64(load_le64(p) ^ secret64(s), load_le64(p + 8) ^ secret64(s + 8));
}
SZ_HD uint64_t xxh3_short(const uint8_t* p, uint64_t len) {  // len <= 16
  if (len > 8) {
    const uint64_t lo = load_le64(p) ^ (secret64(24) ^ secret64(32));
    const uint64_t hi = load_le64(p + len - 8) ^ (secret64(40) ^ secret64(48));
    uint64_t sw = 0;
    for (int i = 0; i < 8; ++i) sw = (sw << 8) | ((lo >> (8 * i)) & 0xFFu);  // byte swap
    return xxh3_avalanche(len + sw + hi + mul128_fold64(lo, hi));
  }
  if (len >= 4) {
    const uint64_t in1 = load_le32(p), in2 = load_le32(p + len - 4);
    const uint64_t keyed = (in2 + (in1 << 32)) ^ (secret64(8) ^ secret64(16));
    return xxh3_rrmxmx(keyed, len);
  }
  if (len > 0) {
    const uint32_t combined = (uint32_t{p[0]} << 16) | (uint32_t{p[len >> 1]} << 24) |
                              uint32_t{p[len - 1]} | (static_cast<uint32_t>(len) << 8);
    return xxh64_avalanche(uint64_t{combined} ^ (uint64_t{secret32(0)} ^ secret32(4)));
  }
  return xxh64_avalanche(secret64(56) ^ secret64(64));
}
SZ_HD uint64_t xxh3_mid(const uint8_t* p, uint64_t len) {  // 17..240
  uint64_t acc = len * XxhPrimes::P64_1;
  if (len <= 128) {
    const uint32_t rounds = static_cast<uint32_t>((len - 1) / 32);  // 0..3 extra pairs
    for (uint32_t r = rounds + 1; r-- > 0;) {
      acc += xxh3_mix16(p + 16 * r, 32 * r);
      acc += xxh3_mix16(p + len - 16 * (r + 1), 32 * r + 16);
    }
    return xxh3_avalanche(acc);
  }
  for (uint32_t i = 0; i < 8; ++i) acc += xxh3_mix16(p + 16 * i, 16 * i);
  acc = xxh3_avalanche(acc);
  const uint32_t rounds = static_cast<uint32_t>(len / 16);
  for (uint32_t i = 8; i < rounds; ++i) acc += xxh3_mix16(p + 16 * i, 16 * (i - 8) + 3);
  acc += xxh3_mix16(p + len - 16, 136 - 17);
  return xxh3_avalanche(acc);
}

// Long inputs (> 240 bytes): eight 64-bit accumulators over 64-byte
// stripes. Within one 1 KiB block every stripe's contribution is a plain
// sum, so a warp can compute a block in parallel; blocks are serial.
struct Xxh3Acc {
  uint64_t a[8];
  SZ_HD void init() {
    a[0] = XxhPrimes::P32_3; a[1] = XxhPrimes::P64_1; a[2] = XxhPrimes::P64_2; a[3] = XxhPrimes::P64_3;
    a[4] = XxhPrimes::P64_4; a[5] = XxhPrimes::P32_2; a[6] = XxhPrimes::P64_5; a[7] = XxhPrimes::P32_1;
  }
  // One stripe's 8 words with the secret at byte offset s, added to d (a
  // plain sum: the GPU accumulates stripes in separate lanes, then reduces).
  // With the 8 secret words already loaded (a GPU lane keeps its stripe's
  // words in registers across blocks).
  SZ_HD static void stripe_keyed(const uint64_t w[8], const uint64_t key[8], uint64_t d[8]) {
    for (uint32_t i = 0; i < 8; ++i) {
      const uint64_t k = w[i] ^ key[i];
      d[i ^ 1u] += w[i];
      d[i] += (k & 0xFFFFFFFFull) * (k >> 32);
    }
  }
  SZ_HD static void stripe_words(const uint64_t w[8], uint32_t s, uint64_t d[8]) {
    uint64_t key[8];
    for (uint32_t i = 0; i < 8; ++i) key[i] = secret64(s + 8 * i);
    stripe_keyed(w, key, d);
  }
  SZ_HD void stripe(const uint8_t* p, uint32_t s) {
    uint64_t w[8];
    for (uint32_t i = 0; i < 8; ++i) w[i] = load_le64(p + 8 * i);
    stripe_words(w, s, a);
  }
  // One accumulator lane of the scramble (8 threads can run one each).
  SZ_HD void scramble_lane(uint32_t i) {
    uint64_t v = a[i];
    v ^= v >> 47;
    v ^= secret64(kXxh3SecretSize - 64 + 8 * i);
    a[i] = v * XxhPrimes::P32_1;
  }
  SZ_HD void scramble() {
    for (uint32_t i = 0; i < 8; ++i) scramble_lane(i);
  }
  SZ_HD uint64_t merge(uint64_t len) const {
    uint64_t r = len * XxhPrimes::P64_1;
    for (uint32_t i = 0; i < 4; ++i)
      r += mul128_fold64(a[2 * i] ^ secret64(11 + 16 * i), a[2 * i + 1] ^ secret64(11 + 16 * i + 8));
    return xxh3_avalanche(r);
  }
};
inline constexpr uint32_t kXxh3StripesPerBlock = (kXxh3SecretSize - 64) / 8;  // 16
inline constexpr uint32_t kXxh3BlockLen = 64 * kXxh3StripesPerBlock;           // 1024

SZ_HD uint64_t xxh3_long(const uint8_t* p, uint64_t len) {
  Xxh3Acc acc;
  acc.init();
  const uint64_t blocks = (len - 1) / kXxh3BlockLen;
  for (uint64_t b = 0; b < blocks; ++b) {
    for (uint32_t s = 0; s < kXxh3StripesPerBlock; ++s) acc.stripe(p + b * kXxh3BlockLen + 64 * s, 8 * s);
    acc.scramble();
  }
  const uint64_t stripes = ((len - 1) - blocks * kXxh3BlockLen) / 64;
  for (uint64_t s = 0; s < stripes; ++s) acc.stripe(p + blocks * kXxh3BlockLen + 64 * s, 8 * static_cast<uint32_t>(s));
  acc.stripe(p + len - 64, kXxh3SecretSize - 64 - 7);
  return acc.merge(len);
}

SZ_HD uint64_t xxh3_64(const uint8_t* p, uint64_t len) {
  if (len <= 16) return xxh3_short(p, len);
  if (len <= 240) return xxh3_mid(p, len);
  return xxh3_long(p, len);
}

}  // namespace dev
}  // namespace splitzip
