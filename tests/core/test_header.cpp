// SPDX-License-Identifier: Apache-2.0
// Header write/parse round trip (v2 and v1), the v2 header rules, layout
// arithmetic and the escape budget.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "core/header.h"
#include "core/layout.h"

namespace splitzip {
namespace {

FrameHeader coded_header() {
  FrameHeader h;
  h.dtype = 1;
  h.flags = kFlagChecksum;
  h.chunk_log2 = 10;
  h.n_elems = 5000;
  h.escape_count = 7;
  h.codebook_count = 3;
  h.codebook[0] = 126;
  h.codebook[1] = 127;
  h.codebook[2] = 125;
  h.block_log2 = kChecksumBlockLog2;
  h.content_checksum = 0x1122334455667788ull;
  // 10000 bytes: one checksum block, stream 7 holds one check.
  h.frame_size = coded_layout(1, 5000, 10, 7, 1).frame_size;
  return h;
}

void reseal(uint8_t* b) { store_le32(b + kHeaderCheckOffset, header_check(b)); }

// A frame buffer (header + zero payload) of h, header written and sealed.
std::vector<uint8_t> frame_of(const FrameHeader& h) {
  std::vector<uint8_t> f(h.frame_size, 0);
  write_header(h, f.data());
  return f;
}

Status parse(const std::vector<uint8_t>& f) {
  FrameHeader p;
  return parse_header(f.data(), f.size(), &p);
}

TEST(Header, WriteParseRoundTrip) {
  const FrameHeader h = coded_header();
  uint8_t b[64];
  write_header(h, b);
  EXPECT_EQ(b[0], 0x53);
  EXPECT_EQ(b[3], 0x56);
  EXPECT_EQ(b[4], 2);
  EXPECT_EQ(b[49], 0);   // mode: the nibble code
  EXPECT_EQ(b[50], 16);  // block_log2 with CHECKSUM
  EXPECT_EQ(b[51], 0);
  EXPECT_EQ(b[8], 5000 & 0xFF);  // little-endian n
  EXPECT_EQ(b[9], 5000 >> 8);
  EXPECT_EQ(b[56], 0x88);
  EXPECT_EQ(b[63], 0x11);
  FrameHeader p;
  std::vector<uint8_t> frame(h.frame_size, 0);
  std::memcpy(frame.data(), b, 64);
  ASSERT_EQ(parse_header(frame.data(), frame.size(), &p), Status::ok);
  EXPECT_EQ(p.n_elems, h.n_elems);
  EXPECT_EQ(p.escape_count, h.escape_count);
  EXPECT_EQ(p.frame_size, h.frame_size);
  EXPECT_EQ(p.codebook_count, 3);
  EXPECT_EQ(p.codebook[2], 125);
  EXPECT_EQ(p.content_checksum, h.content_checksum);
  EXPECT_TRUE(p.has_checksum());
  EXPECT_FALSE(p.stored());
  EXPECT_EQ(p.version, 2);
  EXPECT_EQ(p.block_log2, 16);
  EXPECT_EQ(p.n_checks(), 1u);
  // Rule 11: the frame must be fully present, but src may extend past it.
  EXPECT_EQ(parse_header(frame.data(), frame.size() - 1, &p), Status::truncated);
  frame.resize(frame.size() + 100);
  EXPECT_EQ(parse_header(frame.data(), frame.size(), &p), Status::ok);
}

TEST(Header, NullArguments) {
  FrameHeader p;
  EXPECT_EQ(parse_header(nullptr, 64, &p), Status::invalid_argument);
  EXPECT_EQ(parse_header(nullptr, 0, &p), Status::truncated);
  uint8_t b[64] = {};
  EXPECT_EQ(parse_header(b, 64, nullptr), Status::invalid_argument);
}

TEST(Layout, BF16ExampleByHand) {
  // n = 1001 bf16, chunk 64, E = 3: residual 1001 -> 64..1065, codes 501 at
  // 1072, counts 2*16=32 at 1584, positions 6 at 1616, exps 3 at 1632.
  const FrameLayout L = coded_layout(1, 1001, 6, 3);
  EXPECT_EQ(L.res_off, 64u);
  EXPECT_EQ(L.res_size, 1001u);
  EXPECT_EQ(L.high_size, 0u);
  EXPECT_EQ(L.high_off, 1072u);
  EXPECT_EQ(L.code_off, 1072u);
  EXPECT_EQ(L.code_size, 501u);
  EXPECT_EQ(L.count_off, 1584u);
  EXPECT_EQ(L.count_size, 32u);
  EXPECT_EQ(L.pos_off, 1616u);
  EXPECT_EQ(L.exp_off, 1632u);
  EXPECT_EQ(L.frame_size, 1648u);
}

TEST(Layout, Fp8HasNoByteStream) {
  const FrameLayout L = coded_layout(4, 16, 6, 0);
  EXPECT_EQ(L.res_size, 0u);
  EXPECT_EQ(L.high_off, 64u);
  EXPECT_EQ(L.high_size, 6u);
  EXPECT_EQ(L.code_off, 80u);
  EXPECT_EQ(L.count_off, 96u);
  EXPECT_EQ(L.pos_size, 0u);
  EXPECT_EQ(L.frame_size, 112u);
}

// v2 header_check: low 32 bits of XXH3-64 of the header with the check zeroed.
TEST(HeaderV2, HeaderCheckIsXxh3) {
  auto f = frame_of(coded_header());
  uint8_t tmp[64];
  std::memcpy(tmp, f.data(), 64);
  std::memset(tmp + kHeaderCheckOffset, 0, 4);
  EXPECT_EQ(load_le32(f.data() + kHeaderCheckOffset), static_cast<uint32_t>(XXH3_64bits(tmp, 64)));
  EXPECT_EQ(parse(f), Status::ok);
  // A v1-style XXH64 check on a v2 header is corrupt.
  store_le32(f.data() + kHeaderCheckOffset, static_cast<uint32_t>(XXH64(tmp, 64, 0)));
  EXPECT_EQ(parse(f), Status::header_corrupt);
}

TEST(HeaderV2, ModeMustBeZero) {
  for (const uint8_t mode : std::initializer_list<uint8_t>{1, 2, 255}) {
    auto f = frame_of(coded_header());
    f[49] = mode;
    EXPECT_EQ(parse(f), Status::header_corrupt) << "unsealed";
    reseal(f.data());
    EXPECT_EQ(parse(f), Status::bad_header) << int{mode};
  }
}

TEST(HeaderV2, BlockLog2FollowsChecksumFlag) {
  // With CHECKSUM: exactly 16.
  for (const uint8_t v : std::initializer_list<uint8_t>{0, 15, 17, 255}) {
    auto f = frame_of(coded_header());
    f[50] = v;
    reseal(f.data());
    EXPECT_EQ(parse(f), Status::bad_header) << int{v};
  }
  // Without CHECKSUM: exactly 0.
  FrameHeader h = coded_header();
  h.flags = 0;
  h.block_log2 = 0;
  h.content_checksum = 0;
  h.frame_size = frame_size_of(h);
  auto f = frame_of(h);
  EXPECT_EQ(parse(f), Status::ok);
  f[50] = 16;
  reseal(f.data());
  EXPECT_EQ(parse(f), Status::bad_header);
}

TEST(HeaderV2, Byte51Reserved) {
  auto f = frame_of(coded_header());
  f[51] = 1;
  reseal(f.data());
  EXPECT_EQ(parse(f), Status::reserved_bits);
}

TEST(HeaderV2, FrameSizeCountsBlockChecks) {
  FrameHeader h = coded_header();
  auto f = frame_of(h);
  // The frame size without stream 7 is a size mismatch for a v2 checksum frame.
  store_le64(f.data() + 24, coded_layout(1, 5000, 10, 7).frame_size);
  reseal(f.data());
  EXPECT_EQ(parse(f), Status::size_mismatch);
  // Stored: data padded to 16, then the checks padded to 16.
  h.flags = kFlagStored | kFlagChecksum;
  h.escape_count = 0;
  h.codebook_count = 0;
  std::memset(h.codebook, 0, 16);
  h.n_elems = 65537;  // 131074 bytes: 3 blocks
  EXPECT_EQ(h.n_checks(), 3u);
  EXPECT_EQ(frame_size_of(h), 64u + 131088u + 16u);
  h.frame_size = frame_size_of(h);
  EXPECT_EQ(parse(frame_of(h)), Status::ok);
}

TEST(HeaderV1, StillParsed) {
  FrameHeader h = coded_header();
  h.version = 1;
  h.block_log2 = 0;
  h.frame_size = coded_layout(1, 5000, 10, 7).frame_size;  // no stream 7 in v1
  EXPECT_EQ(h.n_checks(), 0u);
  auto f = frame_of(h);
  EXPECT_EQ(f[4], 1);
  uint8_t tmp[64];
  std::memcpy(tmp, f.data(), 64);
  std::memset(tmp + kHeaderCheckOffset, 0, 4);
  EXPECT_EQ(load_le32(f.data() + kHeaderCheckOffset), static_cast<uint32_t>(XXH64(tmp, 64, 0)));
  FrameHeader p;
  ASSERT_EQ(parse_header(f.data(), f.size(), &p), Status::ok);
  EXPECT_EQ(p.version, 1);
  EXPECT_EQ(p.n_checks(), 0u);
  EXPECT_EQ(p.block_log2, 0);
  // An XXH3 check on a v1 header is corrupt.
  store_le32(f.data() + kHeaderCheckOffset, static_cast<uint32_t>(XXH3_64bits(tmp, 64)));
  EXPECT_EQ(parse(f), Status::header_corrupt);
  // In v1, bytes 49-51 are all reserved.
  for (int byte : {49, 50, 51}) {
    auto g = frame_of(h);
    g[byte] = 16;
    reseal(g.data());
    EXPECT_EQ(parse(g), Status::reserved_bits) << byte;
  }
}

TEST(Header, VersionsOutsideRange) {
  for (const uint8_t v : std::initializer_list<uint8_t>{0, 4, 255}) {
    auto f = frame_of(coded_header());
    f[4] = v;
    EXPECT_EQ(parse(f), Status::unsupported_version) << int{v};
  }
}

// escape_budget must be exactly the largest E with coded < stored and <= capacity.
TEST(MaxEscapes, MatchesBruteForce) {
  for (uint32_t dt = 1; dt <= 4; ++dt) {
    for (uint64_t n : {1ull, 2ull, 3ull, 7ull, 31ull, 64ull, 65ull, 200ull, 1000ull, 4097ull}) {
      for (uint32_t cl : {6u, 10u, 15u}) {
        for (uint64_t checks : {uint64_t{0}, checksum_blocks(n * geometry_of(dt).bytes)}) {
          const uint64_t stored = stored_frame_size(dt, n, checks);
          for (uint64_t cap : {stored, stored - 16, uint64_t{100}, ~uint64_t{0}}) {
            uint64_t expect = kNoEscapeBudget;
            for (uint64_t e = 0; e <= n; ++e) {
              const uint64_t s = coded_layout(dt, n, cl, e, checks).frame_size;
              if (s < stored && s <= cap) expect = e;
            }
            ASSERT_EQ(escape_budget(dt, n, cl, cap, checks), expect)
                << dt << " " << n << " " << cl << " " << cap << " " << checks;
          }
        }
      }
    }
  }
  EXPECT_EQ(escape_budget(1, 0, 10, 1000), kNoEscapeBudget);
  EXPECT_EQ(escape_budget(9, 10, 10, 1000), kNoEscapeBudget);
  // The linear bound holds for every n' <= n.
  for (uint32_t dt = 1; dt <= 4; ++dt)
    for (uint64_t n = 1; n <= 3000; n += 37) {
      const uint64_t b = escape_budget(dt, n, 6, ~uint64_t{0});
      if (b != kNoEscapeBudget) {
        ASSERT_GE(escape_budget_bound(dt, 3000), b) << dt << " " << n;
      }
    }
}

// The stored frame with block checks (FORMAT.md 5, v2).
TEST(Layout, CompressBoundIsStoredSize) {
  EXPECT_EQ(compress_bound(Dtype::bf16, 0), 64u);
  EXPECT_EQ(compress_bound(Dtype::bf16, 1), 64u + 16u + 16u);
  EXPECT_EQ(compress_bound(Dtype::fp32, 4), 64u + 16u + 16u);
  EXPECT_EQ(compress_bound(Dtype::fp8_e5m2, 17), 64u + 32u + 16u);
  EXPECT_EQ(compress_bound(Dtype::bf16, 32768), 64u + 65536u + 16u);
  EXPECT_EQ(compress_bound(Dtype::bf16, 32769), 64u + 65552u + 16u);
  EXPECT_EQ(compress_bound(Dtype::bf16, 4 * 32768 + 1), 64u + 262160u + 32u);  // 5 blocks
  EXPECT_EQ(compress_bound(Dtype::bf16, kMaxElems), 64u + (kMaxElems * 2) + 4 * (kMaxElems * 2 >> 16));
  EXPECT_EQ(compress_bound(Dtype::bf16, kMaxElems + 1), 0u);
  EXPECT_EQ(compress_bound(static_cast<Dtype>(0), 10), 0u);
}

}  // namespace
}  // namespace splitzip
