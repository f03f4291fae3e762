/* SPDX-License-Identifier: Apache-2.0 */
// Shared pieces of the Kokkos kernels: unmanaged byte views over caller
// buffers, policies with 64-bit indices, little-endian element access and the
// small by-value tables the functors carry to the device.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "core/dtype_traits.h"
#include "core/layout.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace kokkos_impl {

using Index = int64_t;  // 64-bit loop index: n may reach 2^56

template <class ExecSpace>
using Bytes = Kokkos::View<uint8_t*, typename ExecSpace::memory_space,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class ExecSpace>
using ConstBytes = Kokkos::View<const uint8_t*, typename ExecSpace::memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
// Scratch owned by one call (per-chunk counts and offsets).
template <class ExecSpace>
using U64s = Kokkos::View<uint64_t*, typename ExecSpace::memory_space>;

template <class ExecSpace>
using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
template <class ExecSpace>
using Teams = Kokkos::TeamPolicy<ExecSpace>;

// TeamPolicy league sizes are int; chunk loops launch in batches of this many.
inline constexpr uint64_t kLeagueBatch = uint64_t{1} << 24;

// Exponent -> code, or kEscape when the exponent is not in the codebook.
inline constexpr uint8_t kEscape = 0xFF;
struct CodeMap {
  uint8_t code[256];
};

// Codebook as the decoder needs it, copied by value into kernels.
struct DecodeTable {
  uint8_t entry[16];
  uint32_t count;
  uint32_t exp_limit;  // 32 for 5-bit exponents, 256 for 8-bit
};

// Bits of a failed rule (FORMAT.md 9); the lowest set bit wins.
enum RuleBit : uint32_t {
  kBadPadding = 1u << 0,         // rule 14
  kBadEscapeCounts = 1u << 1,    // rule 15
  kBadEscapePosition = 1u << 2,  // rule 16
  kBadEscapeValue = 1u << 3,     // rule 17
  kBadCode = 1u << 4,            // rule 18
};

inline Status status_of(uint32_t mask) {
  if (mask & kBadPadding) return Status::bad_padding;
  if (mask & kBadEscapeCounts) return Status::bad_escape_counts;
  if (mask & kBadEscapePosition) return Status::bad_escape_position;
  if (mask & kBadEscapeValue) return Status::bad_escape_value;
  if (mask & kBadCode) return Status::bad_code;
  return Status::ok;
}

// Element i of a little-endian array of T::Bits (any alignment).
template <class T, class View>
KOKKOS_INLINE_FUNCTION typename T::Bits load_elem(const View& v, uint64_t i) {
  uint32_t x = 0;
  for (uint32_t b = 0; b < T::kBytes; ++b) x |= uint32_t{v(i * T::kBytes + b)} << (8u * b);
  return static_cast<typename T::Bits>(x);
}

template <class T, class View>
KOKKOS_INLINE_FUNCTION void store_elem(const View& v, uint64_t i, typename T::Bits x) {
  for (uint32_t b = 0; b < T::kBytes; ++b)
    v(i * T::kBytes + b) = static_cast<uint8_t>(uint32_t{x} >> (8u * b));
}

template <class View>
KOKKOS_INLINE_FUNCTION uint32_t load_u16(const View& v, uint64_t off) {
  return uint32_t{v(off)} | (uint32_t{v(off + 1)} << 8);
}

template <class View>
KOKKOS_INLINE_FUNCTION void store_u16(const View& v, uint64_t off, uint32_t x) {
  v(off) = static_cast<uint8_t>(x);
  v(off + 1) = static_cast<uint8_t>(x >> 8);
}

// Elements in chunk c (the last one may be short).
KOKKOS_INLINE_FUNCTION uint64_t chunk_length(uint64_t n, uint32_t chunk_log2, uint64_t c) {
  const uint64_t begin = c << chunk_log2;
  const uint64_t chunk = uint64_t{1} << chunk_log2;
  return n - begin < chunk ? n - begin : chunk;
}

}  // namespace kokkos_impl
}  // namespace splitzip
