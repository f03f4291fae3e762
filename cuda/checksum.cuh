// SPDX-License-Identifier: Apache-2.0
// Checksums on the device.
//
// v2 (cuda/block_hash.h): cta_xxh3_64 hashes any buffer with a whole CTA:
// the 1 KiB steps of XXH3's long path are split over the warps, two steps
// per warp pass (lanes 0-15 and 16-31, one 64-byte stripe per lane, 16-byte
// coalesced loads: a warp reads 2 KiB contiguous), the 8 stripe sums of a
// step reduced with a 16-lane reduce-scatter (8 u64 shuffles), the deltas
// kept in shared memory; then 8 threads run the serial chain, one
// accumulator lane each (an add and a scramble lane per KiB). Each lane's 8
// secret words are computed once per hash into shared memory (its stripe
// index never changes), not 8 constant byte loads per word. Used for every 64 KiB checksum block (fused into the
// main kernels) and for the frame checksum over the block hashes.
//
// v1 frames (decode only): XXH64 is four serial chains; warp_xxh64 runs them
// in four lanes. Slow, kept for reading old frames.
#pragma once

#include <cstdint>

#include "cuda/block_hash.h"
#include "cuda/plan.h"

namespace splitzip {
namespace cuda_detail {

constexpr uint32_t kHashWindow = 64;  // steps whose deltas fit in shared memory at once

struct HashShared {
  uint64_t key[16][8];  // lane l's 8 secret words (stripe l & 15 of every step), set once per hash
  uint64_t delta[kHashWindow][8];
  dev::Xxh3Acc acc;
  uint64_t result;
};

// Sum of d[8] over the 16 lanes of this half-warp, scattered: afterwards
// lane l holds the total of index 4*b3 + 2*b2 + b1 (bits of l & 15).
__device__ __forceinline__ uint64_t half_warp_reduce_scatter8(const uint64_t d[8], uint32_t lane) {
  const bool h3 = lane & 8u, h2 = lane & 4u, h1 = lane & 2u;
  uint64_t w[4], x[2];
SZ_UNROLL
  for (int k = 0; k < 4; ++k) {
    const uint64_t keep = h3 ? d[4 + k] : d[k];
    const uint64_t send = h3 ? d[k] : d[4 + k];
    w[k] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 8);
  }
SZ_UNROLL
  for (int k = 0; k < 2; ++k) {
    const uint64_t keep = h2 ? w[2 + k] : w[k];
    const uint64_t send = h2 ? w[k] : w[2 + k];
    x[k] = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 4);
  }
  const uint64_t keep = h1 ? x[1] : x[0];
  const uint64_t send = h1 ? x[0] : x[1];
  const uint64_t y = keep + __shfl_xor_sync(0xFFFFFFFFu, send, 2);
  return y + __shfl_xor_sync(0xFFFFFFFFu, y, 1);
}

// XXH3-64 of len bytes at p, by the whole CTA (every thread calls it, the
// result is returned to every thread). Ends with a barrier.
__device__ __forceinline__ uint64_t cta_xxh3_64(const uint8_t* p, uint64_t len, HashShared& sh) {
  const uint32_t t = threadIdx.x, lane = t & 31u, warp = t >> 5;
  if (len <= kXxh3MidMax) {
    if (t == 0) sh.result = dev::xxh3_64(p, len);
    __syncthreads();
    return sh.result;
  }
  if (t == 0) sh.acc.init();
  // Hoisted: lane l hashes stripe l & 15 of every step, so its keys are
  // fixed; shared memory rather than registers (16 more registers would
  // spill the decode kernel at its 64-register cap).
  if (t < 16) xxh3_lane_keys(t, sh.key[t]);
  __syncthreads();
  const uint64_t* key = sh.key[lane & 15u];
  const uint64_t steps = xxh3_steps(len);
  for (uint64_t w0 = 0; w0 < steps; w0 += kHashWindow) {
    const uint64_t left = steps - w0;
    const auto wsteps = static_cast<uint32_t>(left < kHashWindow ? left : kHashWindow);
    const uint32_t pairs = (wsteps + 1) / 2;
    for (uint32_t q = warp; q < pairs; q += kWarps) {  // uniform per warp: all lanes shuffle
      const uint32_t k = 2 * q + (lane >> 4);
      uint64_t d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (k < wsteps) xxh3_stripe_delta_keyed(p, len, w0 + k, lane & 15u, key, d);
      const uint64_t sum = half_warp_reduce_scatter8(d, lane);
      if (k < wsteps && (lane & 1u) == 0) sh.delta[k][(lane & 15u) >> 1] = sum;
    }
    __syncthreads();
    if (t < 8)  // the 8 accumulator lanes are independent chains until the merge
      for (uint32_t k = 0; k < wsteps; ++k) xxh3_chain_lane(sh.acc, t, sh.delta[k][t], w0 + k + 1 == steps);
    __syncthreads();
  }
  if (t == 0) sh.result = sh.acc.merge(len);
  __syncthreads();
  return sh.result;
}

// Block hashes of the checksum blocks whose first byte lies in
// [byte0, byte1) of a buffer of `bytes` bytes at data, into hashes[].
// Whole CTA; ends with a barrier.
__device__ __forceinline__ void cta_block_hashes(const uint8_t* data, uint64_t bytes, uint64_t byte0,
                                                 uint64_t byte1, uint64_t* hashes, HashShared& sh) {
  uint64_t b0, b1;
  tile_check_blocks(byte0, byte1, &b0, &b1);
  for (uint64_t b = b0; b < b1; ++b) {
    const uint64_t h = cta_xxh3_64(data + (b << kChecksumBlockLog2), check_block_len(bytes, b), sh);
    if (threadIdx.x == 0) hashes[b] = h;
  }
}

// v1 content checksum: XXH64 with its four lane chains in lanes 0..3 of the
// calling warp; the hash is valid in lane 0.
__device__ __forceinline__ uint64_t warp_xxh64(const uint8_t* p, uint64_t size) {
  const uint32_t lane = threadIdx.x & 31u;
  uint64_t acc = 0;
  if (lane < 4 && size >= 32) acc = dev::xxh64_lane(p, size, lane);
  uint64_t v[4];
SZ_UNROLL
  for (int l = 0; l < 4; ++l) v[l] = __shfl_sync(0xFFFFFFFFu, acc, l);
  uint64_t h = 0;
  if (lane == 0) h = dev::xxh64_finish(size >= 32 ? dev::xxh64_combine(v) : dev::XxhPrimes::P64_5,
                                       p + (size & ~uint64_t{31}), size);
  return h;
}

}  // namespace cuda_detail
}  // namespace splitzip
