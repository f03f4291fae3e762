// SPDX-License-Identifier: Apache-2.0
// splitzip CUDA API: stream-ordered compression and decompression of
// device-resident buffers, in the style of CUB.
//
// - Every *_async call only enqueues work on `stream`: no host
//   synchronisation, no allocation, no host round trip. Results (frame size,
//   status) land in device memory; read them after the stream reaches them.
// - All calls are CUDA-graph capturable: each one enqueues a fixed sequence
//   of kernel launches whose shape depends only on host-side arguments.
//   Fast-mode compression is one cooperative kernel launch per call (the
//   device must support cooperative launches; warm_up() / the first call
//   check it and return backend_unavailable otherwise); capacity mode
//   (EncodeConfig::mode) is 4 launches. Decompression of either mode is
//   7-9 launches (mode-0 kernels, then the capacity kernels).
// - Workspace: the caller allocates it once (any device memory, 16-byte
//   aligned; cudaMalloc gives 256) at the size the *_workspace_size query
//   returns, and may reuse it for any later call of that size or smaller,
//   once the previous call using it has finished in stream order. The
//   workspace needs no initialisation.
// - Synchronisation: none of the functions in this header synchronises the
//   device or the stream. The first call on each device reads its properties
//   and kernel occupancy once and loads the kernel modules (host-side driver
//   work, cached; no device work is waited on): call warm_up() first when
//   that first call would otherwise fall inside a graph capture.
//   device_available() may initialise the CUDA runtime.
// - A host-side Status other than ok means nothing was enqueued and the
//   device outputs are untouched: every argument, the device, the kernel
//   occupancy and every launch shape are checked before the first launch,
//   and an error already pending on the thread (cudaPeekAtLastError, left
//   for its owner) makes the call return device_error without enqueuing.
//   The one failure that can follow a successful first launch is a broken
//   context (device fault, driver reset) between two launches: the call
//   then returns device_error, and that context runs no further work on any
//   stream, so no partial result is ever observed as a success. Data-dependent outcomes (escape overflow
//   -> stored frame, corrupt frames, bad items of a batch) are reported per
//   buffer in the device status array.
// - Frames are byte-identical to the CPU backends' (core/FORMAT.md).
//
// Content checksum (format v2, FORMAT.md 4.5): XXH3-64 of every 64 KiB block
// of the original bytes, computed inside the main encode/decode kernels
// while the tile's bytes are in cache (warp-cooperative, coalesced loads),
// the frame checksum over the block hashes by the CTA that finishes the
// buffer's last tile (encode) or by the finalize kernel (decode). It adds
// ALU work and an L2 re-read of each block, no extra pass over HBM (fp8
// decode: one extra read of the output); see cuda/README.md for the cost
// estimate. A decoder that verifies reports the first corrupt block
// (DecodeConfig::d_corrupt_blocks). Version-1 frames carry XXH64 of the
// whole output, which is serial: verifying one runs four chains in one warp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "splitzip/splitzip.hpp"

SZ_PUBLIC_BEGIN
namespace splitzip {
namespace cuda {

// True when the CUDA runtime sees at least one device (cached).
bool device_available();

// Optional: reads the current device's properties and loads every kernel
// module now (each *_async call does this once per device on first use).
// Call it before capturing a graph so no first-use work happens inside the
// capture. No device synchronisation. backend_unavailable without a device.
Status warm_up();

// The stream the synchronous "cuda" Backend (splitzip::compress /
// decompress / decompress_frames on device or managed buffers) uses for
// calls made by this thread: every copy, allocation and kernel of such a
// call is enqueued on it, after the work the caller already put there (no
// other synchronisation is needed for an input produced on that stream),
// and the call ends with one cudaStreamSynchronize of it (see
// cuda/README.md for the count per call). Default: cudaStreamPerThread.
// Thread-local; ScopedBackendStream restores the previous one.
void set_backend_stream(cudaStream_t stream);
cudaStream_t backend_stream();
class ScopedBackendStream {
 public:
  explicit ScopedBackendStream(cudaStream_t s) : prev_(backend_stream()) { set_backend_stream(s); }
  ~ScopedBackendStream() { set_backend_stream(prev_); }
  ScopedBackendStream(const ScopedBackendStream&) = delete;
  ScopedBackendStream& operator=(const ScopedBackendStream&) = delete;

 private:
  cudaStream_t prev_;
};

// ---------------------------------------------------------------- compress

struct EncodeConfig {
  Dtype dtype = Dtype::bf16;
  uint32_t chunk_log2 = kDefaultChunkLog2;  // 6..15
  bool checksum = false;                    // v2 block checksum: stream 7 + header (fused, fast)
  // Mode::capacity (FORMAT.md 4.6, not for fp8_e4m3): per-64Ki-element
  // Huffman of the exponents, or a stored frame when that is not smaller;
  // the codebook(s) are not used (d_codebooks may be null). Four launches
  // (setup, count, plan, write), not cooperative; the frame size and status
  // land in the same device outputs as the fast mode's. A decoder needs no
  // flag: the mode is in the frame.
  Mode mode = Mode::fast;
};

// One buffer of a batch. Pointers are device-accessible (device or managed
// memory). dst_capacity must be at least compress_bound(dtype, n_elems): a
// frame never needs more, and the stored-mode fallback (FORMAT.md 4.4) is
// decided on the device after the escapes are counted.
struct CompressItem {
  const void* src = nullptr;
  void* dst = nullptr;
  uint64_t n_elems = 0;
  uint64_t dst_capacity = 0;
  uint32_t codebook = 0;  // index into the batch's codebook array
  uint32_t reserved = 0;
};

// Workspace bytes for `count` buffers of `total_elems` elements in all, in
// either mode, checksum or not. Host only, no CUDA call. Grows linearly:
// about total_elems / 6 bytes for bf16 and fp32 (escape staging), 8 bytes
// per 64 KiB of input (block hashes) plus a few bytes per 32768 elements;
// capacity mode needs about 420 bytes per 65536 elements plus a few hundred
// per buffer; the query returns the larger of the two.
uint64_t compress_workspace_size(Dtype dtype, uint64_t total_elems, uint64_t count = 1);

// One buffer with a host-side codebook (passed by value to the kernels).
// The input is read once from memory; a second read happens only for a
// stored-mode fallback (the frame then holds a copy of the input); the
// optional checksum re-reads each tile right after it is coded (L2). Writes the frame to dst, its size to *d_frame_size and its
// status to *d_status.
Status compress_async(const void* src, uint64_t n_elems, void* dst, uint64_t dst_capacity,
                      const Codebook& codebook, const EncodeConfig& cfg, uint64_t* d_frame_size,
                      Status* d_status, void* workspace, uint64_t workspace_bytes,
                      cudaStream_t stream);

// `count` buffers (per layer, per KV block, ...) in one pass: d_items[count]
// and d_codebooks[codebook_count] in device memory; every codebook's dtype
// must equal cfg.dtype. total_elems must bound the sum of n_elems (it sizes
// the workspace); items beyond it fail with invalid_argument. One status and
// one frame size per item.
Status compress_batch_async(const CompressItem* d_items, uint64_t count, uint64_t total_elems,
                            const Codebook* d_codebooks, uint32_t codebook_count,
                            const EncodeConfig& cfg, uint64_t* d_frame_sizes, Status* d_statuses,
                            void* workspace, uint64_t workspace_bytes, cudaStream_t stream);

// ---------------------------------------------------------------- decompress

struct DecodeConfig {
  uint64_t max_output_bytes = 0;  // per frame; 0: bounded by dst_capacity only (rule 12)
  bool verify_checksum = true;    // rule 19 when the frame carries a checksum
  // Optional, device memory, one per frame: the first checksum block whose
  // check differs (CHECKSUM_MISMATCH of a v2 frame), else ~0 (kNoBlock).
  uint64_t* d_corrupt_blocks = nullptr;
  // The caller knows every frame is fast mode (mode 0: e.g. the wire path,
  // whose encoder never asks for capacity): skip the capacity kernels' 4-5
  // launches, which every call otherwise enqueues because the mode of a
  // device-resident frame is read only on the device. A mode-1 frame then
  // fails with UNSUPPORTED_MODE (never decoded wrong). Default off: any
  // frame decodes with no flag.
  bool fast_frames_only = false;
};

struct DecompressItem {
  const void* src = nullptr;  // one frame (src_size may extend past it)
  uint64_t src_size = 0;
  void* dst = nullptr;
  uint64_t dst_capacity = 0;
};

// Workspace bytes for `count` frames decoding into total_dst_bytes of
// destination capacity in all, frames of either mode. Host only.
uint64_t decompress_workspace_size(uint64_t total_dst_bytes, uint64_t count = 1);

// Decodes the frame at src, fast (mode 0) or capacity (mode 1, FORMAT.md
// 4.6): the mode is read on the device, no flag and no host round trip.
// The mode-0 kernels (3-4 launches) run, then the capacity kernels (4-5
// launches: setup, index, blocks, [hashes], final), whose final kernel
// overwrites the outputs of mode-1 frames; each set does no per-element
// work on the other mode's frames. The header and every offset are
// validated on the device (FORMAT.md 9, same statuses as the CPU
// decoders); a corrupt frame never makes the kernels read or write out of
// bounds. *d_out_size gets the decoded byte count (0 on error).
Status decompress_async(const void* src, uint64_t src_size, void* dst, uint64_t dst_capacity,
                        const DecodeConfig& cfg, uint64_t* d_out_size, Status* d_status,
                        void* workspace, uint64_t workspace_bytes, cudaStream_t stream);

// `count` frames of either mode, mixed freely, d_items in device memory.
// total_dst_bytes must bound the sum of dst_capacity (frames beyond it fail
// with invalid_argument).
Status decompress_batch_async(const DecompressItem* d_items, uint64_t count,
                              uint64_t total_dst_bytes, const DecodeConfig& cfg,
                              uint64_t* d_out_sizes, Status* d_statuses, void* workspace,
                              uint64_t workspace_bytes, cudaStream_t stream);

// ---------------------------------------------------------------- calibration

// Adds the exponent counts of n elements to d_counts[256] (device memory;
// zero it first to start a new histogram). Integer atomics: deterministic.
Status histogram_async(Dtype dtype, const void* src, uint64_t n_elems, uint64_t* d_counts,
                       cudaStream_t stream);

// Top-16 codebook of a histogram (FORMAT.md 3) into *d_codebook (device
// memory), for compress_batch_async: dynamic calibration without leaving the
// device (it reads the input twice: histogram, then encode).
Status codebook_from_histogram_async(Dtype dtype, const uint64_t* d_counts, Codebook* d_codebook,
                                     cudaStream_t stream);

}  // namespace cuda
}  // namespace splitzip
SZ_PUBLIC_END
