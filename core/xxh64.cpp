// XXH64, written from the published algorithm description (xxHash spec,
// "XXH64 algorithm"). Little-endian reads regardless of host order.
#include <cstdint>

#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

constexpr uint64_t P1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t P2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t P3 = 0x165667B19E3779F9ull;
constexpr uint64_t P4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t P5 = 0x27D4EB2F165667C5ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t read64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t read32(const uint8_t* p) {
  return uint64_t{p[0]} | (uint64_t{p[1]} << 8) | (uint64_t{p[2]} << 16) | (uint64_t{p[3]} << 24);
}

inline uint64_t round_(uint64_t acc, uint64_t input) {
  acc += input * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}
inline uint64_t merge(uint64_t acc, uint64_t v) {
  acc ^= round_(0, v);
  return acc * P1 + P4;
}

}  // namespace

uint64_t xxh64(const void* data, uint64_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t remaining = size;
  uint64_t h;
  if (remaining >= 32) {
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    while (remaining >= 32) {
      v1 = round_(v1, read64(p));
      v2 = round_(v2, read64(p + 8));
      v3 = round_(v3, read64(p + 16));
      v4 = round_(v4, read64(p + 24));
      p += 32;
      remaining -= 32;
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = seed + P5;
  }
  h += size;
  while (remaining >= 8) {
    h ^= round_(0, read64(p));
    h = rotl(h, 27) * P1 + P4;
    p += 8;
    remaining -= 8;
  }
  if (remaining >= 4) {
    h ^= read32(p) * P1;
    h = rotl(h, 23) * P2 + P3;
    p += 4;
    remaining -= 4;
  }
  while (remaining > 0) {
    h ^= uint64_t{*p} * P5;
    h = rotl(h, 11) * P1;
    ++p;
    --remaining;
  }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

}  // namespace splitzip
