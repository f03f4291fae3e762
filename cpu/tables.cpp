// SPDX-License-Identifier: Apache-2.0
// Codebook tables for the CPU kernels (see cpu/kernels.h).
#include <algorithm>
#include <cstring>

#include "cpu/kernels.h"

namespace splitzip {
namespace cpu {

void build_encode_tables(const Codebook& cb, uint32_t exp_bits, EncodeTables* out) {
  EncodeTables t;
  const uint32_t limit = 1u << exp_bits;
  uint8_t sorted[16];
  uint32_t count = 0;
  for (uint32_t c = 0; c < cb.count && c < 16; ++c) {
    if (cb.entries[c] >= limit) continue;  // cannot occur in data of this dtype
    t.code1_of[cb.entries[c]] = static_cast<uint8_t>(c + 1);
    sorted[count++] = cb.entries[c];
  }
  std::sort(sorted, sorted + count);
  // Greedy cover by windows [base, base + 16), kept inside [0, limit) so an
  // index never wraps around onto a small exponent.
  for (uint32_t k = 0; k < count;) {
    const uint32_t base = std::min<uint32_t>(sorted[k], limit - 16);
    const uint32_t w = t.windows++;
    t.base[w] = static_cast<uint8_t>(base);
    for (uint32_t lo = 0; lo < 16; ++lo) t.lut[w][lo] = t.code1_of[base + lo];
    while (k < count && sorted[k] < base + 16) ++k;
  }
  *out = t;
}

void build_decode_tables(const uint8_t entries[16], Dtype dtype, DecodeTables* out) {
  DecodeTables t;
  for (uint32_t c = 0; c < 16; ++c) {
    const uint32_t e = entries[c];
    t.exp[c] = static_cast<uint8_t>(e);
    if (dtype == Dtype::bf16) {
      t.lo[c] = static_cast<uint8_t>((e & 1u) << 7);
      t.hi[c] = static_cast<uint8_t>(e >> 1);
    } else {
      t.hi[c] = static_cast<uint8_t>((e << 2) & 0xFFu);  // fp16 high byte / fp8 byte
    }
  }
  *out = t;
}

}  // namespace cpu
}  // namespace splitzip
