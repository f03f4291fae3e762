/* SPDX-License-Identifier: Apache-2.0 */
// Little-endian loads and stores (FORMAT.md 1), independent of host order.
#pragma once

#include <cstdint>

#include "core/dtype_traits.h"  // SZ_HD

namespace splitzip {

SZ_HD uint16_t load_le16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
SZ_HD uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
SZ_HD uint64_t load_le64(const uint8_t* p) {
  return uint64_t{load_le32(p)} | (uint64_t{load_le32(p + 4)} << 32);
}
SZ_HD void store_le16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
SZ_HD void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
SZ_HD void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace splitzip
