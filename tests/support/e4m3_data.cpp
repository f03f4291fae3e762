// SPDX-License-Identifier: Apache-2.0
#include "tests/support/e4m3_data.h"

#include <algorithm>
#include <cmath>

namespace splitzip::test {
namespace {

struct Lcg {
  uint64_t s;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
};

double e4m3_magnitude(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  return e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
}

}  // namespace

std::vector<uint8_t> e4m3_kv_bytes(uint64_t n, uint64_t seed, uint32_t far_percent) {
  Lcg g{seed};
  std::vector<uint8_t> v(n);
  for (auto& x : v) {
    const uint32_t r = g.next();
    const uint32_t u = r % 100;
    uint32_t e = u < 30 ? 6 : u < 55 ? 8 : u < 70 ? 5 : u < 80 ? 9 : u < 88 ? 7 : u < 96 - far_percent ? 4 : 3;
    if (u >= 100 - far_percent) e = (r >> 8) & 15;
    x = static_cast<uint8_t>(((r >> 12) & 0x80u) | (e << 3) | ((r >> 16) & 7u));
  }
  return v;
}

std::vector<uint8_t> e4m3_uniform_bytes(uint64_t n, uint64_t seed) {
  Lcg g{seed};
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(g.next() >> 7);
  return v;
}

uint8_t to_e4m3(double x) {
  const double a = std::fabs(x);
  uint8_t best = 0;  // the nearest of the non-negative finite codes 0x00..0x7E
  for (uint8_t b = 1; b <= 0x7E; ++b) {
    const double d = std::fabs(e4m3_magnitude(b) - a), db = std::fabs(e4m3_magnitude(best) - a);
    if (d < db || (d == db && (b & 1) == 0)) best = b;
  }
  return static_cast<uint8_t>(best | (std::signbit(x) ? 0x80 : 0));
}

std::vector<uint8_t> e4m3_scaled(const float* f, uint64_t n) {
  float amax = 0;
  for (uint64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(f[i]));
  const double scale = amax > 0 ? 448.0 / amax : 1.0;
  std::vector<uint8_t> b(n);
  for (uint64_t i = 0; i < n; ++i) b[i] = to_e4m3(static_cast<double>(f[i]) * scale);
  return b;
}

}  // namespace splitzip::test
