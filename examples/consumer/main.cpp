// SPDX-License-Identifier: Apache-2.0
// C++ consumer: compress a small bf16 buffer, decompress it, check the round
// trip and print the ratio and the backend that ran.
#include <splitzip/splitzip.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  // 64K bf16 values shaped like a KV tensor: smooth, mostly small magnitudes.
  const uint64_t n = 65536;
  std::vector<uint16_t> src(n);
  for (uint64_t i = 0; i < n; ++i) {
    const float v = 0.25f * std::sin(0.001f * static_cast<float>(i)) * std::cos(0.37f * static_cast<float>(i % 97));
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    src[i] = static_cast<uint16_t>(bits >> 16);  // bf16 = top half of float32
  }

  std::vector<uint8_t> frame(splitzip::compress_bound(splitzip::Dtype::bf16, n));
  const splitzip::Result c = splitzip::compress(splitzip::Dtype::bf16, src.data(), n, frame.data(), frame.size());
  if (!c.ok()) {
    std::fprintf(stderr, "compress failed: %s\n", splitzip::status_name(c.status));
    return 1;
  }
  std::vector<uint16_t> out(n);
  const splitzip::Result d = splitzip::decompress(frame.data(), c.size, out.data(), n * 2);
  if (!d.ok() || d.size != n * 2 || std::memcmp(out.data(), src.data(), n * 2) != 0) {
    std::fprintf(stderr, "round trip failed: %s\n", splitzip::status_name(d.status));
    return 1;
  }
  std::printf("c++: %llu -> %llu bytes, ratio %.3f, backend %s, round trip ok\n",
              static_cast<unsigned long long>(n * 2), static_cast<unsigned long long>(c.size),
              static_cast<double>(n * 2) / static_cast<double>(c.size), c.backend);
  return 0;
}
