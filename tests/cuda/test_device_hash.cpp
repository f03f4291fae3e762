// SPDX-License-Identifier: Apache-2.0
// The device side of the format's hashes against the host's: dev::xxh3_64
// and dev::xxh64 (core/xxh_device.h, what device code runs) against
// libxxhash, and the CUDA kernels' v2 block checksum (cuda/block_hash.h and
// the warp/CTA split of cuda/checksum.cuh, emulated lane by lane) against
// the host's block hashes and frame checksum (core/hash.h, core/reference.h).
// The rest of the format core (header, layout, frame rules) is one
// header-only SZ_HD source compiled for host and device, so there is no
// second copy to compare.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/hash.h"
#include "core/reference.h"
#include "core/xxh_device.h"
#include "cuda/block_hash.h"

namespace splitzip::test {
namespace {

using namespace cuda_detail;

std::vector<uint8_t> random_bytes(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(DeviceHash, Xxh3AndXxh64EqualLibxxhashOnEveryLengthTo4096) {
  const auto data = random_bytes(4096 + 16, 1);
  for (uint64_t len = 0; len <= 4096; ++len) {
    for (uint64_t off : {uint64_t{0}, uint64_t{3}}) {  // aligned and unaligned starts
      const uint8_t* p = data.data() + off;
      ASSERT_EQ(dev::xxh3_64(p, len), XXH3_64bits(p, len)) << "xxh3 len " << len << " off " << off;
      ASSERT_EQ(dev::xxh64(p, len), XXH64(p, len, 0)) << "xxh64 len " << len << " off " << off;
    }
  }
}

TEST(DeviceHash, Xxh3AndXxh64EqualLibxxhashOnRandomInputs) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 200; ++k) {
    const uint64_t len = rng() % (300 * 1024);
    const auto data = random_bytes(len, rng());
    ASSERT_EQ(dev::xxh3_64(data.data(), len), XXH3_64bits(data.data(), len)) << "len " << len;
    if (k % 10 == 0) ASSERT_EQ(dev::xxh64(data.data(), len), XXH64(data.data(), len, 0)) << "len " << len;
  }
  // Constant and structured contents.
  for (uint8_t fill : {0x00, 0xFF, 0x80}) {
    std::vector<uint8_t> v(70000, fill);
    ASSERT_EQ(dev::xxh3_64(v.data(), v.size()), XXH3_64bits(v.data(), v.size()));
  }
}

// cuda/checksum.cuh, half_warp_reduce_scatter8, with the shuffles done on
// arrays: lane l of a 16-lane half ends with the sum of index
// 4*b3 + 2*b2 + b1 of its bits.
void reduce_scatter_emulated(const uint64_t d[16][8], uint64_t out[16]) {
  uint64_t w[16][4], x[16][2], y[16];
  for (uint32_t l = 0; l < 16; ++l)
    for (int k = 0; k < 4; ++k) {
      const bool h3 = l & 8u;
      const uint32_t o = l ^ 8u;
      const bool oh3 = o & 8u;
      w[l][k] = (h3 ? d[l][4 + k] : d[l][k]) + (oh3 ? d[o][k] : d[o][4 + k]);
    }
  for (uint32_t l = 0; l < 16; ++l)
    for (int k = 0; k < 2; ++k) {
      const bool h2 = l & 4u;
      const uint32_t o = l ^ 4u;
      const bool oh2 = o & 4u;
      x[l][k] = (h2 ? w[l][2 + k] : w[l][k]) + (oh2 ? w[o][k] : w[o][2 + k]);
    }
  for (uint32_t l = 0; l < 16; ++l) {
    const bool h1 = l & 2u;
    const uint32_t o = l ^ 2u;
    const bool oh1 = o & 2u;
    y[l] = (h1 ? x[l][1] : x[l][0]) + (oh1 ? x[o][0] : x[o][1]);
  }
  for (uint32_t l = 0; l < 16; ++l) out[l] = y[l] + y[l ^ 1u];
}

// cta_xxh3_64 run lane by lane: each lane's keys loaded once
// (xxh3_lane_keys), each step's 16 stripes by 16 lanes
// (xxh3_stripe_delta_keyed), the reduce-scatter, deltas indexed as the
// kernel stores them, then the chain by 8 threads (one accumulator lane
// each, xxh3_chain_lane) and the merge.
uint64_t cta_xxh3_emulated(const uint8_t* p, uint64_t len) {
  if (len <= kXxh3MidMax) return dev::xxh3_64(p, len);
  uint64_t keys[16][8];
  for (uint32_t lane = 0; lane < 16; ++lane) xxh3_lane_keys(lane, keys[lane]);
  dev::Xxh3Acc acc;
  acc.init();
  const uint64_t steps = xxh3_steps(len);
  for (uint64_t j = 0; j < steps; ++j) {
    uint64_t d[16][8] = {};
    for (uint32_t lane = 0; lane < 16; ++lane) xxh3_stripe_delta_keyed(p, len, j, lane, keys[lane], d[lane]);
    uint64_t red[16];
    reduce_scatter_emulated(d, red);
    uint64_t delta[8];
    for (uint32_t lane = 0; lane < 16; lane += 2) delta[lane >> 1] = red[lane];
    for (uint32_t t = 0; t < 8; ++t) xxh3_chain_lane(acc, t, delta[t], j + 1 == steps);
  }
  return acc.merge(len);
}

TEST(DeviceHash, CtaSplitEqualsLibxxhash) {
  const auto data = random_bytes(3 * 65536 + 64, 11);
  std::vector<uint64_t> lens;
  for (uint64_t len = 0; len <= 3000; ++len) lens.push_back(len);
  for (uint64_t len : {uint64_t{65535}, uint64_t{65536}, uint64_t{65537}, uint64_t{64 * 1024 * 3}}) lens.push_back(len);
  for (uint64_t len : lens) {
    for (uint64_t off : {uint64_t{0}, uint64_t{5}}) {
      const uint8_t* p = data.data() + off;
      ASSERT_EQ(cta_xxh3_emulated(p, len), XXH3_64bits(p, len)) << "len " << len << " off " << off;
      if (len % 97 == 0) ASSERT_EQ(xxh3_by_steps(p, len), XXH3_64bits(p, len)) << "len " << len;
      if (len % 89 == 0 || len > 3000) ASSERT_EQ(xxh3_by_lanes(p, len), XXH3_64bits(p, len)) << "len " << len;
    }
  }
}

// The test: the device's block hashes (per tile, CTA split) and its
// frame checksum (the same split over the hash array) equal the host's
// (libxxhash through core/hash.h) for 1 element, exactly one block, many
// blocks and a short last block.
TEST(DeviceHash, BlockChecksumEqualsHost) {
  const uint64_t blk = kChecksumBlockBytes;
  for (uint32_t eb : {1u, 2u, 4u}) {
    for (uint64_t bytes : {uint64_t{eb}, blk, 7 * blk, 7 * blk + 12 * eb, 2 * blk - eb}) {
      const auto data = random_bytes(bytes, bytes + eb);
      const uint64_t count = checksum_blocks(bytes);
      std::vector<uint64_t> host(count), dev_h(count, 0);
      host_block_hashes(data.data(), bytes, host.data());
      // Tiles of 2^15 elements of eb bytes, each hashing the blocks that
      // start in it (cta_block_hashes).
      const uint64_t tile_bytes = (uint64_t{1} << 15) * eb;
      for (uint64_t t0 = 0; t0 < bytes; t0 += tile_bytes) {
        uint64_t b0, b1;
        tile_check_blocks(t0, std::min(t0 + tile_bytes, bytes), &b0, &b1);
        for (uint64_t b = b0; b < b1; ++b)
          dev_h[b] = cta_xxh3_emulated(data.data() + (b << kChecksumBlockLog2), check_block_len(bytes, b));
      }
      ASSERT_EQ(dev_h, host) << "bytes " << bytes << " elem " << eb;
      const uint64_t frame_dev = cta_xxh3_emulated(reinterpret_cast<const uint8_t*>(dev_h.data()), 8 * count);
      EXPECT_EQ(frame_dev, combine_block_hashes(host.data(), count)) << "bytes " << bytes;
    }
  }
  // Empty input: no blocks, XXH3 of nothing.
  EXPECT_EQ(cta_xxh3_emulated(nullptr, 0), combine_block_hashes(nullptr, 0));
}

}  // namespace
}  // namespace splitzip::test
