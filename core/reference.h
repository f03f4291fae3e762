/* SPDX-License-Identifier: Apache-2.0 */
// The scalar reference codec: FORMAT.md in code, the oracle every backend is
// tested against byte for byte. Whole frames, host memory, one thread.
#pragma once

#include <cstdint>

#include "core/codec.h"
#include "core/codec_args.h"
#include "core/dtype_traits.h"

namespace splitzip {

// Calls f(Traits{}) for the traits struct of a dtype the nibble layout takes
// (the residual byte and 3-bit parts); returns false for an invalid one and
// for fp8_e4m3 (its own layout, FORMAT.md 4.7; callers branch on codec_of()).
template <class F>
bool with_traits(Dtype d, F&& f) {
  return visit_codec_dtype<Codec::nibble>(static_cast<uint32_t>(d), static_cast<F&&>(f));
}

// Adds the exponent counts of n elements to counts[256] (scalar).
void add_exponent_counts(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256]);

// One frame (FORMAT.md 4): dynamic top-16 when args.codebook is null, the
// stored decision of 4.4, the v2 block checksum when args.checksum.
FrameOutcome reference_compress(const CompressArgs& args);

// One frame at args.src: rules 1-19 in order (the lowest failing rule is
// reported), then the output. Reads v1 and v2 frames.
FrameOutcome reference_decompress(const DecompressArgs& args);

struct FrameHeader;
// fp8_e4m3 coded streams (FORMAT.md 4.7), core/reference_e4m3.cpp.
Status reference_e4m3_encode(const uint8_t* src, uint64_t n, const Codebook& cb, uint64_t budget, uint64_t n_checks,
                             uint8_t* frame, uint64_t* escapes);
Status reference_e4m3_decode(const FrameHeader& h, const uint8_t* frame, uint8_t* dst);

// Block hashes of `bytes` bytes (v2 content checksum), one per block.
void host_block_hashes(const void* data, uint64_t bytes, uint64_t* hashes);

}  // namespace splitzip
