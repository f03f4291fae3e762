/* SPDX-License-Identifier: Apache-2.0 */
// Fast host implementation of the capacity mode (FORMAT.md 4.6): the same
// bytes as reference_capacity_encode / the same statuses as
// reference_capacity_decode, with OpenMP across exponent blocks and 32
// interleaved bit streams within a block. Plain function interface so the
// CPU backend calls it in a few lines:
//
//   if (a.mode == Mode::capacity) return capacity_compress_frame(a);
//   if (h.mode == kModeCapacity) return capacity_decompress_opened(a, h);
#pragma once

#include "core/codec_args.h"
#include "core/header.h"

namespace splitzip {

// hints (a batch's, cpu/cpu_backend.cpp): next, the following item's input,
// which the last block's split prefetches as it goes (a page is one block:
// its first lines would otherwise miss when its own split starts).
struct CapEncodeHints {
  const void* next = nullptr;
};

// Whole frame, like reference_compress with args.mode == capacity (stored
// fallback, stream 7, gaps and header included).
FrameOutcome capacity_compress_frame(const CompressArgs& args, const CapEncodeHints& hints = CapEncodeHints());

// Whole frame of any kind (a non-mode-1 frame goes to reference_decompress).
FrameOutcome capacity_decompress_frame(const DecompressArgs& args);

// The same for a frame that open_host_frame(args, &h) accepted: the caller
// that already opened it (the CPU backend) does not parse and check the
// header and gaps twice.
// hints (a batch's, cpu/cpu_backend.cpp): stream_output, the batch's
// output is past the caches (non-temporal stores); next / next_size, the
// following item's frame, which the last block's stream decoder prefetches
// as it goes (a page is one block: nothing else overlaps its misses).
struct CapDecodeHints {
  bool stream_output = false;
  const void* next = nullptr;
  uint64_t next_size = 0;
};
FrameOutcome capacity_decompress_opened(const DecompressArgs& args, const FrameHeader& h,
                                        const CapDecodeHints& hints = CapDecodeHints());

}  // namespace splitzip
