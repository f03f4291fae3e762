/* SPDX-License-Identifier: Apache-2.0 */
// Internal host-side entry points of the CUDA kernels: the public API
// (api.cu) and the Backend adapter (cuda_backend.cu) both enqueue the same
// kernel sequences through these. Host code, CUDA runtime types.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/plan.h"
#include "splitzip/splitzip_cuda.hpp"

namespace splitzip {
namespace cuda_detail {

// Multiprocessors and resident CTAs per multiprocessor of the main kernels
// on the current device (queried once per device, cached).
struct DeviceInfo {
  int device = 0;
  int sms = 0;
  int enc_ctas_per_sm = 0;
  int dec_ctas_per_sm = 0;
  bool cooperative = false;  // cudaDevAttrCooperativeLaunch: the fused encode kernel needs it
};
Status device_info(DeviceInfo* out);

// Grid sizes are 32-bit; larger batches are split by the caller.
constexpr uint64_t kMaxBatchCount = (uint64_t{1} << 31) - 1;

// The launches of one call, computed and validated on the host before the
// first one is enqueued (api promise: an error status means nothing was
// enqueued). Shapes depend only on host-side arguments and the device's
// occupancy, so a call is graph-capturable.
struct LaunchShape {
  uint32_t grid = 0;
  uint32_t block = 0;
};
// Encode: one cooperative launch (setup | grid barrier | main + per-buffer
// finalize by the buffer's last CTA | grid barrier | copy).
struct EncodeLaunches {
  LaunchShape fused;
  static constexpr uint32_t kLaunches = 1;
};
struct DecodeLaunches {
  LaunchShape setup, main, hash, finalize;  // hash.grid == 0: not launched (no verification)
  uint32_t launches() const { return hash.grid ? 4u : 3u; }
};

// Either a device array of items (batch) or one item held in the launch
// arguments (single call, host codebook by value).
struct EncSetupArgs {
  const cuda::CompressItem* items = nullptr;
  uint64_t count = 0;
  const Codebook* codebooks = nullptr;
  uint32_t n_codebooks = 0;
  // Single item (items == nullptr).
  const void* src = nullptr;
  void* dst = nullptr;
  uint64_t n = 0;
  uint64_t capacity = 0;
  Codebook cb{};       // single item: the codebook by value, unless codebooks != nullptr
                       // (then codebooks[0], device memory: dynamic top-16)
  uint32_t dtype = 0;
  uint32_t chunk_log2 = 0;
  uint32_t flags = 0;  // kPlanChecksum
  uint8_t* ws = nullptr;
  WorkspaceLayout lay{};
};

// The launch shapes of enqueue_encode / enqueue_decode (host only, no CUDA
// call): invalid_argument or backend_unavailable when no valid launch exists.
struct EncSetupArgs;
struct DecSetupArgs;
Status encode_launches(const DeviceInfo& info, const EncSetupArgs& a, uint64_t elems_bound, EncodeLaunches* out);
Status decode_launches(const DeviceInfo& info, const DecSetupArgs& a, DecodeLaunches* out);

// One cooperative launch of the fused encode kernel. elems_bound: the most
// elements in all (sizes the grid). No synchronisation.
Status enqueue_encode(const EncSetupArgs& a, uint64_t elems_bound, uint64_t* d_sizes,
                      Status* d_statuses, cudaStream_t stream);

struct DecSetupArgs {
  const cuda::DecompressItem* items = nullptr;
  uint64_t count = 0;
  const void* src = nullptr;
  uint64_t src_size = 0;
  void* dst = nullptr;
  uint64_t dst_capacity = 0;
  uint64_t limit = kNoBlock;  // rule 12: output bytes allowed per frame (kNoBlock: none)
  bool verify = false;
  uint8_t* ws = nullptr;
  WorkspaceLayout lay{};
};

// setup -> main (with block hashes) -> [fp8 block hashes] -> finalize.
// d_corrupt (optional): first corrupt checksum block per frame, or kNoBlock.
// No synchronisation.
Status enqueue_decode(const DecSetupArgs& a, uint64_t* d_sizes, Status* d_statuses, uint64_t* d_corrupt,
                      cudaStream_t stream);

Status enqueue_histogram(uint32_t dtype, const void* src, uint64_t n, uint64_t* d_counts,
                         cudaStream_t stream);
Status enqueue_codebook(uint32_t dtype, const uint64_t* d_counts, Codebook* d_codebook,
                        cudaStream_t stream);

// A launch error (bad configuration, no device) as a Status; clears it.
Status launch_status();
// An error left pending by earlier work on this thread (not cleared: it is
// the caller's), as a Status; checked before a call enqueues anything.
Status pending_error();

}  // namespace cuda_detail
}  // namespace splitzip
