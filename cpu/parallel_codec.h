/* SPDX-License-Identifier: Apache-2.0 */
// The CPU backend's OpenMP layer: streams 1..6 of a coded frame split over
// threads by contiguous ranges, with the block checksum fused into the same
// pass, plus the exponent histogram and the stored copy. Everything else
// about a frame (header, budget, gaps, block checks, rules 1-13 and 19) is
// the format core's, driven by cpu/cpu_backend.cpp.
#pragma once

#include <cstdint>

#include "core/header.h"
#include "core/layout.h"
#include "cpu/kernels.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace cpu {

struct CodedEncode {
  Dtype dtype = Dtype::bf16;
  const uint8_t* src = nullptr;
  uint64_t n = 0;
  uint32_t chunk_log2 = kDefaultChunkLog2;
  const Codebook* codebook = nullptr;
  // Non-null: build_encode_tables(*codebook) made once for many frames
  // (a batch sharing one codebook), not rebuilt per frame.
  const EncodeTables* tables = nullptr;
  uint8_t* frame = nullptr;  // streams go to their coded_layout offsets
  uint64_t capacity = 0;
  uint64_t budget = 0;       // escape_budget(); more escapes: escape_overflow
  uint64_t n_checks = 0;     // stream 7 entries (only shifts nothing before it)
  uint64_t* hashes = nullptr;  // non-null: the block hash of each input block
  int threads = 0;
  // Non-temporal stores however small the frame: it is one of a batch whose
  // output will not stay in cache (the batch is past stream_min_bytes()).
  bool stream_output = false;
  // One thread's job in a batch: that worker calls flush_streams() once
  // after its last frame instead of this call fencing (see cpu/kernels.h).
  bool caller_fences = false;
};

// One small frame of a batch of same-shaped pages (cpu/cpu_backend.cpp), on
// the calling thread without a checksum: streams 1..3 as encode_coded()
// writes them, while the escape counts stay in L1 scratch; then streams 4-6
// and every zero gap from stream 4 on are written in one go from that
// scratch, non-temporal with `stream` (so, with the header written the same
// way, no line of the frame is read for ownership).
struct PageEncode {
  Dtype dtype = Dtype::bf16;
  const uint8_t* src = nullptr;
  uint64_t n = 0;
  uint32_t chunk_log2 = kDefaultChunkLog2;
  const EncodeTables* tables = nullptr;
  const FrameLayout* layout0 = nullptr;  // coded_layout(dtype, n, chunk_log2, 0)
  uint8_t* frame = nullptr;
  uint64_t capacity = 0;
  uint64_t budget = 0;
  bool stream_output = false;  // as CodedEncode; the batch worker fences
};

// ok with *escapes and *frame_size, or escape_overflow (nothing usable
// written), out_of_memory, internal_error (frame larger than capacity).
// *streamed: the frame's streams went out non-temporal (write_frame_bytes).
Status encode_page(const PageEncode& job, uint64_t* escapes, uint64_t* frame_size, bool* streamed);

// Largest stream 4 (escape counts) encode_page() keeps in L1 scratch;
// larger frames take encode_coded().
uint64_t page_counts_max();

// dst = src (bytes); with `stream` as non-temporal stores (dst and bytes
// 16-byte multiples), left unfenced like the kernels' (flush_streams()).
void write_frame_bytes(uint8_t* dst, const uint8_t* src, uint64_t bytes, bool stream);

// How a batch item is decoded: non-temporal stores however small the
// output (the batch's total is past stream_min_bytes()), and on one thread
// the fence left to the batch worker as for CodedEncode.
struct DecodeHints {
  bool stream_output = false;
  bool caller_fences = false;
};

// Streams 1..6. ok with *escapes, or escape_overflow (nothing usable
// written), out_of_memory, internal_error (frame larger than capacity).
Status encode_coded(const CodedEncode& job, uint64_t* escapes);

// Rule 14 in-stream and rules 15-18 in rule order, and the values into dst
// (h: a parsed coded frame; frame: its bytes). hashes non-null: the block
// hash of each output block, taken as each piece is written.
Status decode_coded(const FrameHeader& h, const uint8_t* frame, uint8_t* dst, uint64_t* hashes,
                    int threads, const DecodeHints& hints = DecodeHints());

// counts[256] = exponent counts of n elements.
// warm: the frame encoded next (one thread only; see WarmOutput).
void exponent_histogram(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256], int threads,
                        const WarmOutput* warm = nullptr);

// dst = src (bytes); hashes non-null: the block hash of each block.
void copy_hashed(const uint8_t* src, uint8_t* dst, uint64_t bytes, uint64_t* hashes, int threads);

// Orders the calling thread's non-temporal stores (cpu/kernels.h).
void flush_streams();

// Smallest batch (decoded bytes in all) whose pages decode with
// non-temporal stores: a page batch past the 2 MiB L2 is read back from
// memory (copied to a device, stored), and a cold batch decoded 1.25-1.65x
// faster so (docs/DESIGN.md, "Page batches"). Lowered with
// set_stream_min_bytes() for tests.
uint64_t batch_decode_stream_min_bytes();

// Workers for a batch of `items` independent frames of `bytes` in all
// (requested > 0: that many, capped by items; else the override, else all
// cores from parallel_min_bytes() on).
int batch_threads(int requested, uint64_t bytes, uint64_t items);

}  // namespace cpu
}  // namespace splitzip
