/* SPDX-License-Identifier: Apache-2.0 */
// The v2 block checksum (core/hash.h: XXH3-64 of each 2^16-byte block, then
// XXH3-64 of the block hashes) split the way the kernels compute it.
// Host+device, no CUDA headers: the kernels (cuda/checksum.cuh) and the CPU
// emulation (tests/cuda) run these same steps.
//
// XXH3-64 of len > 240 bytes (core/xxh_device.h, xxh3_long) is a chain over
// "steps" j = 0 .. nb, nb = (len-1)/1024: step j < nb adds the contributions
// of the 16 stripes of 1 KiB block j (secret offsets 8s) and scrambles; the
// final step nb adds stripes s < ns = ((len-1) - 1024 nb)/64 of block nb and
// the last stripe at len-64 with secret offset 192-64-7, then merges.
// Within one step the stripe contributions are plain 64-bit sums, so any
// number of threads may compute them (one stripe per thread, then a
// reduction) in any order: the delta of a step is exact and order-free.
// Only the chain over steps is serial, and it is 8 adds + one scramble per
// KiB.
#pragma once

#include <cstdint>

#include "core/hash.h"
#include "core/xxh_device.h"
#include "cuda/vec_io.h"

namespace splitzip {
namespace cuda_detail {

constexpr uint32_t kXxh3LastStripeSecret = dev::kXxh3SecretSize - 64 - 7;  // 121
constexpr uint32_t kXxh3MidMax = 240;  // longest input of the short/mid paths

// Steps of the chain for len > 240 (1 .. 64 for a 64 KiB block).
SZ_HD uint64_t xxh3_steps(uint64_t len) { return (len - 1) / dev::kXxh3BlockLen + 1; }

// Stripe s (0..15) of step j of an input of len > 240 bytes at p: its
// address and secret offset, or false when the stripe is not part of the
// step (s past the last stripe of the final step).
SZ_HD bool xxh3_stripe_at(uint64_t len, uint64_t j, uint32_t s, uint64_t* off, uint32_t* secret) {
  const uint64_t nb = (len - 1) / dev::kXxh3BlockLen;
  if (j < nb) {
    *off = j * dev::kXxh3BlockLen + 64u * s;
    *secret = 8u * s;
    return true;
  }
  const auto ns = static_cast<uint32_t>(((len - 1) - nb * dev::kXxh3BlockLen) / 64u);
  if (s < ns) {
    *off = nb * dev::kXxh3BlockLen + 64u * s;
    *secret = 8u * s;
    return true;
  }
  if (s == ns) {
    *off = len - 64;
    *secret = kXxh3LastStripeSecret;
    return true;
  }
  return false;
}

// The 8 words of a stripe: 16-byte vector loads when aligned (the device's
// coalesced path), byte loads otherwise.
SZ_HD void xxh3_load_stripe(const uint8_t* q, uint64_t w[8]) {
  if ((reinterpret_cast<uintptr_t>(q) & 15u) == 0) {
    uint32_t v[16];
SZ_UNROLL
    for (uint32_t k = 0; k < 4; ++k) load16(q + 16 * k, v + 4 * k);
SZ_UNROLL
    for (uint32_t i = 0; i < 8; ++i) w[i] = uint64_t{v[2 * i]} | (uint64_t{v[2 * i + 1]} << 32);
  } else {
SZ_UNROLL
    for (uint32_t i = 0; i < 8; ++i) w[i] = load_le64(q + 8 * i);
  }
}

// Thread-level work item: stripe s of step j, added into d[8] (zero for a
// stripe outside the step).
SZ_HD void xxh3_stripe_delta(const uint8_t* p, uint64_t len, uint64_t j, uint32_t s, uint64_t d[8]) {
  uint64_t off;
  uint32_t secret;
  if (!xxh3_stripe_at(len, j, s, &off, &secret)) return;
  uint64_t w[8];
  xxh3_load_stripe(p + off, w);
  dev::Xxh3Acc::stripe_words(w, secret, d);
}

// A lane's 8 secret words for stripe s: lane s of a CTA hashes stripe s of
// every step, so its keys are fixed for the whole hash and are computed
// once (cta_xxh3_64 keeps the 16 lanes' keys in shared memory), not 64
// bytes of constant loads per stripe.
SZ_HD void xxh3_lane_keys(uint32_t s, uint64_t key[8]) {
  for (uint32_t i = 0; i < 8; ++i) key[i] = dev::secret64(8u * s + 8u * i);
}

// xxh3_stripe_delta with the lane's preloaded keys; the one stripe with
// another secret offset (the final stripe at len - 64) loads its own.
SZ_HD void xxh3_stripe_delta_keyed(const uint8_t* p, uint64_t len, uint64_t j, uint32_t s, const uint64_t key[8],
                                   uint64_t d[8]) {
  uint64_t off;
  uint32_t secret;
  if (!xxh3_stripe_at(len, j, s, &off, &secret)) return;
  uint64_t w[8];
  xxh3_load_stripe(p + off, w);
  if (secret == 8u * s) dev::Xxh3Acc::stripe_keyed(w, key, d);
  else dev::Xxh3Acc::stripe_words(w, secret, d);
}

// Accumulator lane i of one chain step (8 threads run the chain, one lane
// each: the lanes are independent until the merge).
SZ_HD void xxh3_chain_lane(dev::Xxh3Acc& acc, uint32_t i, uint64_t delta_i, bool final_step) {
  acc.a[i] += delta_i;
  if (!final_step) acc.scramble_lane(i);
}

// One chain step: acc += delta, then the scramble unless it is the final step.
SZ_HD void xxh3_chain_step(dev::Xxh3Acc& acc, const uint64_t delta[8], bool final_step) {
  for (uint32_t i = 0; i < 8; ++i) acc.a[i] += delta[i];
  if (!final_step) acc.scramble();
}

// The whole hash computed step by step (one thread, stripes summed in
// order): what the CTA computes in parallel. The CPU tests prove it equals
// libxxhash; the emulator uses it for the kernels' block hashes.
SZ_HD uint64_t xxh3_by_steps(const uint8_t* p, uint64_t len) {
  if (len <= kXxh3MidMax) return dev::xxh3_64(p, len);
  dev::Xxh3Acc acc;
  acc.init();
  const uint64_t steps = xxh3_steps(len);
  for (uint64_t j = 0; j < steps; ++j) {
    uint64_t d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t s = 0; s < dev::kXxh3StripesPerBlock; ++s) xxh3_stripe_delta(p, len, j, s, d);
    xxh3_chain_step(acc, d, j + 1 == steps);
  }
  return acc.merge(len);
}

// The CTA's split exactly (cta_xxh3_64): 16 stripe lanes with hoisted keys,
// their deltas summed per step, the chain run lane by lane (the 8 chain
// threads), then the merge. The emulator hashes with this.
SZ_HD uint64_t xxh3_by_lanes(const uint8_t* p, uint64_t len) {
  if (len <= kXxh3MidMax) return dev::xxh3_64(p, len);
  uint64_t keys[dev::kXxh3StripesPerBlock][8];
  for (uint32_t s = 0; s < dev::kXxh3StripesPerBlock; ++s) xxh3_lane_keys(s, keys[s]);
  dev::Xxh3Acc acc;
  acc.init();
  const uint64_t steps = xxh3_steps(len);
  for (uint64_t j = 0; j < steps; ++j) {
    uint64_t d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t s = 0; s < dev::kXxh3StripesPerBlock; ++s) {
      uint64_t ds[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // lane s's own delta, then the reduction
      xxh3_stripe_delta_keyed(p, len, j, s, keys[s], ds);
      for (uint32_t i = 0; i < 8; ++i) d[i] += ds[i];
    }
    for (uint32_t i = 0; i < 8; ++i) xxh3_chain_lane(acc, i, d[i], j + 1 == steps);
  }
  return acc.merge(len);
}

// ---- per-frame bookkeeping ----

// Checksum blocks a tile hashes: those whose first byte lies in the tile's
// bytes [tile_byte0, tile_byte1). Every block has exactly one such tile.
// (A block's length: check_block_len, core/hash.h.)
SZ_HD void tile_check_blocks(uint64_t tile_byte0, uint64_t tile_byte1, uint64_t* b0, uint64_t* b1) {
  *b0 = checksum_blocks(tile_byte0);
  *b1 = checksum_blocks(tile_byte1);
}

}  // namespace cuda_detail
}  // namespace splitzip
