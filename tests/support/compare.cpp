// SPDX-License-Identifier: Apache-2.0
#include "tests/support/compare.h"

#include <cstdio>

namespace splitzip::test {

uint64_t first_difference(const void* a, uint64_t a_size, const void* b, uint64_t b_size) {
  const auto* pa = static_cast<const uint8_t*>(a);
  const auto* pb = static_cast<const uint8_t*>(b);
  const uint64_t common = a_size < b_size ? a_size : b_size;
  for (uint64_t i = 0; i < common; ++i)
    if (pa[i] != pb[i]) return i;
  return a_size == b_size ? kNoDifference : common;
}

::testing::AssertionResult bytes_equal(const void* a, uint64_t a_size, const void* b, uint64_t b_size) {
  const uint64_t d = first_difference(a, a_size, b, b_size);
  if (d == kNoDifference) return ::testing::AssertionSuccess();
  auto r = ::testing::AssertionFailure();
  r << "sizes " << a_size << " vs " << b_size << ", first difference at byte " << d << ":";
  const auto* pa = static_cast<const uint8_t*>(a);
  const auto* pb = static_cast<const uint8_t*>(b);
  char buf[32];
  for (uint64_t i = d; i < d + 8; ++i) {
    std::snprintf(buf, sizeof buf, " [%llu]", static_cast<unsigned long long>(i));
    r << buf;
    if (i < a_size) { std::snprintf(buf, sizeof buf, " %02x", pa[i]); r << buf; } else { r << " --"; }
    if (i < b_size) { std::snprintf(buf, sizeof buf, "/%02x", pb[i]); r << buf; } else { r << "/--"; }
  }
  return r;
}

::testing::AssertionResult bytes_equal(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return bytes_equal(a.data(), a.size(), b.data(), b.size());
}

}  // namespace splitzip::test
