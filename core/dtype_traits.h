/* SPDX-License-Identifier: Apache-2.0 */
// Split/join traits per dtype, shared by host and device code (FORMAT.md 2).
// One struct per dtype; every backend builds on these so the bit-level rules
// live in exactly one place.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SZ_HD __host__ __device__ __forceinline__
#else
#define SZ_HD inline
#endif

namespace splitzip {

// residual = (sign << M) | mantissa, width W = M + 1.
// kResBytes: whole residual bytes per element (the "byte part").
// kResHighBits: 0 or 3, bits of the packed 3-bit part.
struct Bf16Traits {
  static constexpr const char* kName = "bf16";
  static constexpr uint32_t kId = 1;
  using Bits = uint16_t;
  static constexpr uint32_t kBytes = 2, kExpBits = 8, kManBits = 7;
  static constexpr uint32_t kResBytes = 1, kResHighBits = 0;
  SZ_HD static uint32_t exponent(Bits v) { return (v >> 7) & 0xFFu; }
  SZ_HD static uint32_t residual(Bits v) { return ((v >> 8) & 0x80u) | (v & 0x7Fu); }
  SZ_HD static Bits join(uint32_t e, uint32_t r) {
    return static_cast<Bits>(((r & 0x80u) << 8) | ((e & 0xFFu) << 7) | (r & 0x7Fu));
  }
};

struct Fp16Traits {
  static constexpr const char* kName = "fp16";
  static constexpr uint32_t kId = 2;
  using Bits = uint16_t;
  static constexpr uint32_t kBytes = 2, kExpBits = 5, kManBits = 10;
  static constexpr uint32_t kResBytes = 1, kResHighBits = 3;
  SZ_HD static uint32_t exponent(Bits v) { return (v >> 10) & 0x1Fu; }
  SZ_HD static uint32_t residual(Bits v) { return ((v >> 5) & 0x400u) | (v & 0x3FFu); }
  SZ_HD static Bits join(uint32_t e, uint32_t r) {
    return static_cast<Bits>(((r & 0x400u) << 5) | ((e & 0x1Fu) << 10) | (r & 0x3FFu));
  }
};

struct Fp32Traits {
  static constexpr const char* kName = "fp32";
  static constexpr uint32_t kId = 3;
  using Bits = uint32_t;
  static constexpr uint32_t kBytes = 4, kExpBits = 8, kManBits = 23;
  static constexpr uint32_t kResBytes = 3, kResHighBits = 0;
  SZ_HD static uint32_t exponent(Bits v) { return (v >> 23) & 0xFFu; }
  SZ_HD static uint32_t residual(Bits v) { return ((v >> 8) & 0x800000u) | (v & 0x7FFFFFu); }
  SZ_HD static Bits join(uint32_t e, uint32_t r) {
    return ((r & 0x800000u) << 8) | ((e & 0xFFu) << 23) | (r & 0x7FFFFFu);
  }
};

struct Fp8E5M2Traits {
  static constexpr const char* kName = "fp8_e5m2";
  static constexpr uint32_t kId = 4;
  using Bits = uint8_t;
  static constexpr uint32_t kBytes = 1, kExpBits = 5, kManBits = 2;
  static constexpr uint32_t kResBytes = 0, kResHighBits = 3;
  SZ_HD static uint32_t exponent(Bits v) { return (v >> 2) & 0x1Fu; }
  SZ_HD static uint32_t residual(Bits v) { return ((v >> 5) & 0x4u) | (v & 0x3u); }
  SZ_HD static Bits join(uint32_t e, uint32_t r) {
    return static_cast<Bits>(((r & 0x4u) << 5) | ((e & 0x1Fu) << 2) | (r & 0x3u));
  }
};

// Codes: element 2j low nibble, 2j+1 high nibble of byte j.
SZ_HD uint8_t pack_nibbles(uint32_t lo, uint32_t hi) {
  return static_cast<uint8_t>((lo & 0xFu) | ((hi & 0xFu) << 4));
}
SZ_HD uint32_t nibble_at(const uint8_t* codes, uint64_t i) {
  return (codes[i >> 1] >> ((i & 1u) * 4u)) & 0xFu;
}

}  // namespace splitzip
