/* SPDX-License-Identifier: Apache-2.0 */
// Capacity-mode encode kernels (cpu/capacity_encode-inl.h, compiled per
// Highway target), called by cpu/capacity_codec.cpp.
#pragma once

#include <cstdint>

#include "core/capacity/format.h"

namespace splitzip {
namespace cpu {

// The 32 bit writers of a block (FORMAT.md 4.6.2): stream s's next byte,
// its pending bits (fewer than 8, LSB-first) and their count.
struct CapWriters {
  uint8_t* ptr[kCapStreams];
  uint64_t acc[kCapStreams];
  uint32_t nb[kCapStreams];
};

// Codes rows [0, rows) of a block's exponents (row r = elements 32r..32r+31,
// one code per stream; rows % 8 == 0) into the writers. cl[e] = code | len
// << 16 (codes bit-reversed as cap_codes); first..last: the table's span.
// A writer stores up to 16 bytes at its pointer (zero bits past its pending
// ones): a stream's slot needs 16 bytes of slack.
void cap_pack_rows(const uint8_t* exps, uint32_t rows, const uint32_t cl[256], uint32_t first, uint32_t last,
                   CapWriters* w);
// The same with a table set's codes (FORMAT.md 4.9): stream s takes its
// entries from cl + 256 * (s & mask).
void cap_pack_rows_set(const uint8_t* exps, uint32_t rows, const uint32_t* cl, uint32_t mask, CapWriters* w);

// bf16 split of m elements: residual bytes (FORMAT.md 2) to res (stream:
// non-temporal stores), exponents to exps, and their counts added to counts. *window: the start of
// a 16-value window of exponents that a vector counter counts while
// splitting (-1: count after the split with scalar tables); set for the
// next block from this one's counts (-1 to start; any value gives the same counts).
// pf_next: where the input's prefetches go past its m elements (a batch's
// next page); null: on past its end (the frame's next block).
void cap_split_count_bf16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream,
                          uint64_t counts[256], int32_t* window, const uint8_t* pf_next = nullptr);

// The same for fp16 and fp32 (FORMAT.md 2): fp16 residual bytes to res and
// the packed 3-bit parts to high (element 0's bits at high's bit 0; only
// the block's ceil(3m / 8) bytes are written), fp32 three residual bytes
// per element to res.
void cap_split_count_fp16(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* high, uint8_t* exps, bool stream,
                          uint64_t counts[256], int32_t* window, const uint8_t* pf_next = nullptr);
void cap_split_count_fp32(const uint8_t* in, uint64_t m, uint8_t* res, uint8_t* exps, bool stream,
                          uint64_t counts[256], int32_t* window, const uint8_t* pf_next = nullptr);

// fp8_e5m2 (FORMAT.md 2): the packed 3-bit parts (sign, two mantissa bits)
// to high as fp16's, exponents to exps, their counts.
void cap_split_count_e5m2(const uint8_t* in, uint64_t m, uint8_t* high, uint8_t* exps, uint64_t counts[256],
                          int32_t* window, const uint8_t* pf_next = nullptr);

// Counts of the m bytes at p added to counts (fp8_e4m3 symbols, FORMAT.md
// 4.6.7): the scalar counter of the histogram (cpu/histogram-inl.h).
void cap_count_bytes(const uint8_t* p, uint64_t m, uint64_t counts[256]);

}  // namespace cpu
}  // namespace splitzip
