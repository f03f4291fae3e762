// SPDX-License-Identifier: Apache-2.0
// The format's hashes: the device implementations in core/xxh_device.h
// (dev::xxh64, dev::xxh3_64) against the maintained libxxhash on every
// length 0..4096 and on random lengths up to 1 MiB, the public wrappers, and
// the v2 block checksum (block cutting, block edges, the combine step).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "core/hash.h"
#include "core/xxh_device.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

namespace splitzip {
namespace {

std::vector<uint8_t> random_bytes(uint64_t n, uint64_t seed) {
  std::vector<uint8_t> b(n);
  for (uint64_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(synth::random_u64(seed, i));
  return b;
}

TEST(Hash, KnownVectors) {
  EXPECT_EQ(xxh64("", 0, 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(xxh64("a", 1, 0), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(xxh64("abc", 3, 0), 0x44BC2CF5AD770999ull);
  EXPECT_EQ(xxh64(nullptr, 0, 0), 0xEF46DB3751D8E999ull);
  EXPECT_NE(xxh64("abc", 3, 0), xxh64("abc", 3, 1));
  EXPECT_EQ(xxh3_64("", 0), 0x2D06800538D394C2ull);
  EXPECT_EQ(xxh3_64(nullptr, 0), 0x2D06800538D394C2ull);
  EXPECT_EQ(dev::xxh3_64(nullptr, 0), 0x2D06800538D394C2ull);
  EXPECT_EQ(dev::xxh64(nullptr, 0), 0xEF46DB3751D8E999ull);
}

// Every length 0..4096 covers all XXH3 paths (0, 1-3, 4-8, 9-16, 17-128,
// 129-240, long with partial and whole 1 KiB blocks) and every XXH64 tail.
TEST(Hash, DeviceHashesEqualLibxxhashEveryLengthTo4096) {
  const auto buf = random_bytes(4096 + 8, 7);
  for (uint64_t len = 0; len <= 4096; ++len) {
    ASSERT_EQ(dev::xxh3_64(buf.data(), len), XXH3_64bits(buf.data(), len)) << "xxh3 len " << len;
    ASSERT_EQ(dev::xxh64(buf.data(), len), XXH64(buf.data(), len, 0)) << "xxh64 len " << len;
    // Unaligned start.
    ASSERT_EQ(dev::xxh3_64(buf.data() + 3, len), XXH3_64bits(buf.data() + 3, len)) << "xxh3 +3 len " << len;
    ASSERT_EQ(dev::xxh64(buf.data() + 5, len), XXH64(buf.data() + 5, len, 0)) << "xxh64 +5 len " << len;
  }
}

TEST(Hash, DeviceHashesEqualLibxxhashRandomLengthsTo1MiB) {
  constexpr uint64_t kMax = uint64_t{1} << 20;
  const auto buf = random_bytes(kMax, 11);
  for (uint64_t i = 0; i < 1000; ++i) {
    const uint64_t len = synth::random_u64(12, i) % (kMax + 1);
    const uint64_t off = synth::random_u64(13, i) % 8;
    const uint64_t n = len - (len > off ? off : len);  // stays inside the buffer
    ASSERT_EQ(dev::xxh3_64(buf.data() + off, n), XXH3_64bits(buf.data() + off, n)) << "xxh3 len " << n;
    ASSERT_EQ(dev::xxh64(buf.data() + off, n), XXH64(buf.data() + off, n, 0)) << "xxh64 len " << n;
  }
  ASSERT_EQ(dev::xxh3_64(buf.data(), kMax), XXH3_64bits(buf.data(), kMax));
  ASSERT_EQ(dev::xxh64(buf.data(), kMax), XXH64(buf.data(), kMax, 0));
}

TEST(Hash, PublicWrappersAreLibxxhash) {
  const auto buf = random_bytes(3000, 5);
  for (uint64_t len : {0ull, 1ull, 16ull, 17ull, 240ull, 241ull, 1024ull, 2999ull}) {
    EXPECT_EQ(xxh3_64(buf.data(), len), XXH3_64bits(buf.data(), len));
    EXPECT_EQ(hash_xxh3(buf.data(), len), XXH3_64bits(buf.data(), len));
    EXPECT_EQ(hash_xxh64(buf.data(), len), XXH64(buf.data(), len, 0));
    for (uint64_t seed : {0ull, 1ull, ~0ull}) EXPECT_EQ(xxh64(buf.data(), len, seed), XXH64(buf.data(), len, seed));
  }
}

TEST(BlockChecksum, BlockCount) {
  EXPECT_EQ(kChecksumBlockBytes, 65536u);
  EXPECT_EQ(checksum_blocks(0), 0u);
  EXPECT_EQ(checksum_blocks(1), 1u);
  EXPECT_EQ(checksum_blocks(65535), 1u);
  EXPECT_EQ(checksum_blocks(65536), 1u);
  EXPECT_EQ(checksum_blocks(65537), 2u);
  EXPECT_EQ(checksum_blocks(3 * 65536), 3u);
  EXPECT_EQ(checksum_blocks(uint64_t{1} << 58), uint64_t{1} << 42);
}

// Block hashes written out by hand from the definition: XXH3 of each 2^16
// byte slice, the last one short; combined = XXH3 of the hashes as u64 LE.
uint64_t by_hand_checksum(const std::vector<uint8_t>& data, std::vector<uint64_t>* hashes) {
  hashes->clear();
  std::vector<uint8_t> le;
  for (uint64_t off = 0; off < data.size(); off += 65536) {
    const uint64_t len = data.size() - off < 65536 ? data.size() - off : 65536;
    const uint64_t h = XXH3_64bits(data.data() + off, len);
    hashes->push_back(h);
    for (int i = 0; i < 8; ++i) le.push_back(static_cast<uint8_t>(h >> (8 * i)));
  }
  return XXH3_64bits(le.data(), le.size());
}

TEST(BlockChecksum, BlockEdgesAndCombine) {
  for (uint64_t bytes : {0ull, 1ull, 4095ull, 65535ull, 65536ull, 65537ull, 131071ull, 131072ull, 131073ull,
                         200000ull}) {
    SCOPED_TRACE(bytes);
    const auto data = random_bytes(bytes, bytes + 1);
    std::vector<uint64_t> expect;
    const uint64_t combined = by_hand_checksum(data, &expect);
    const uint64_t count = checksum_blocks(bytes);
    ASSERT_EQ(count, expect.size());
    std::vector<uint64_t> got(count);
    for (uint64_t b = 0; b < count; ++b) got[b] = block_hash(data.data(), bytes, b);
    EXPECT_EQ(got, expect);
    EXPECT_EQ(combine_block_hashes(got.data(), count), combined);
    // The device hash gives the same blocks.
    for (uint64_t b = 0; b < count; ++b) {
      const uint64_t off = b * 65536, len = bytes - off < 65536 ? bytes - off : 65536;
      EXPECT_EQ(dev::xxh3_64(data.data() + off, len), expect[b]);
    }
  }
  // Empty input: zero blocks, the checksum is XXH3 of nothing.
  EXPECT_EQ(combine_block_hashes(nullptr, 0), XXH3_64bits(nullptr, 0));
}

TEST(BlockChecksum, EveryBlockMatters) {
  // A change in block b changes hash b only; the combine sees any block.
  auto data = random_bytes(65536 * 3 + 100, 21);
  std::vector<uint64_t> before, after;
  const uint64_t c0 = by_hand_checksum(data, &before);
  data[65536 * 2 + 7] ^= 0x10;
  const uint64_t c1 = by_hand_checksum(data, &after);
  EXPECT_NE(c0, c1);
  for (size_t b = 0; b < before.size(); ++b) EXPECT_EQ(before[b] != after[b], b == 2) << b;
  std::vector<uint64_t> swapped = before;
  std::swap(swapped[0], swapped[1]);  // order matters
  EXPECT_NE(combine_block_hashes(swapped.data(), swapped.size()), c0);
}

// The encoder's frames carry exactly these: stream 7 and the header checksum.
TEST(BlockChecksum, FrameCarriesBlockChecksAndCombinedChecksum) {
  const uint64_t n = 65536 + 1;  // bf16: 131074 bytes, 3 blocks (last 2 bytes)
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 3);
  std::vector<uint64_t> hashes;
  const uint64_t combined = by_hand_checksum(in, &hashes);
  ASSERT_EQ(hashes.size(), 3u);
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, n));
  CompressOptions o;
  o.checksum = true;
  o.backend = "reference";
  const Result r = compress(Dtype::bf16, in.data(), n, f.data(), f.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  FrameInfo info;
  ASSERT_EQ(frame_info(f.data(), r.size, &info), Status::ok);
  EXPECT_EQ(info.content_checksum, combined);
  EXPECT_EQ(info.checksum_blocks, 3u);
  EXPECT_EQ(info.checksum_block_log2, 16u);
  // Stream 7 is the last stream: 12 bytes of checks then zero up to 16.
  const uint8_t* checks = f.data() + r.size - 16;
  for (int b = 0; b < 3; ++b) {
    uint32_t v;
    std::memcpy(&v, checks + 4 * b, 4);
    EXPECT_EQ(v, static_cast<uint32_t>(hashes[b])) << b;
  }
  for (int i = 12; i < 16; ++i) EXPECT_EQ(checks[i], 0);
}

}  // namespace
}  // namespace splitzip
