/* SPDX-License-Identifier: Apache-2.0 */
// The scalar reference of the capacity mode (FORMAT.md 4.6), called by
// reference_compress / reference_decompress. Host only.
#pragma once

#include <cstdint>
#include <vector>

#include "core/capacity/tables.h"
#include "core/codec_args.h"
#include "core/header.h"

namespace splitzip {

// Streams 1, 2, 8 and 9 of a mode-1 frame into args.dst, and h->mode /
// h->escape_count (= exp_bytes). Returns escape_overflow when the frame must
// be stored instead (n = 0, or the coded frame is not smaller than the stored
// one: FORMAT.md 4.4), dst_too_small when the coded frame exceeds
// args.capacity. Header, stream 7 and gaps are the caller's.
Status reference_capacity_encode(const CompressArgs& args, uint64_t n_checks, FrameHeader* h);

// Rules of FORMAT.md 4.6.5 (after rules 1-13 and the gaps of rule 14), then
// the n elements into dst.
// set: the frame's table set (cap_frame_set), null without TABLES.
Status reference_capacity_decode(const FrameHeader& h, const uint8_t* frame, uint8_t* dst,
                                 const CapTables* set = nullptr);

// One exponent block (FORMAT.md 4.6.2) of m exponents, appended to out. The
// oracle for fast block encoders.
void reference_capacity_encode_block(const uint8_t* exps, uint32_t m, std::vector<uint8_t>* out);

// One block of a TABLES frame (FORMAT.md 4.9): the kind byte, then the
// set's codes (every symbol coded by its stream's table) or an own table.
void reference_capacity_encode_set_block(const CapTables& set, const uint8_t* exps, uint32_t m,
                                         std::vector<uint8_t>* out);
Status reference_capacity_decode_set_block(const CapTables& set, const uint8_t* blk, uint64_t size, uint32_t m,
                                           uint32_t exp_limit, uint8_t* exps);

// Decodes one block of `size` bytes into m exponents; exp_limit 32 or 256.
Status reference_capacity_decode_block(const uint8_t* blk, uint64_t size, uint32_t m, uint32_t exp_limit,
                                       uint8_t* exps);

}  // namespace splitzip
