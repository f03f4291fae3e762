// SPDX-License-Identifier: Apache-2.0
// Header write/parse round trip, layout arithmetic and the escape budget.
#include <gtest/gtest.h>

#include <cstring>

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
  h.content_checksum = 0x1122334455667788ull;
  h.frame_size = coded_layout(1, 5000, 10, 7).frame_size;
  return h;
}

TEST(Header, WriteParseRoundTrip) {
  const FrameHeader h = coded_header();
  uint8_t b[64];
  write_header(h, b);
  EXPECT_EQ(b[0], 0x53);
  EXPECT_EQ(b[3], 0x56);
  EXPECT_EQ(b[4], 1);
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

// max_escapes must be exactly the largest E with coded < stored and <= capacity.
TEST(MaxEscapes, MatchesBruteForce) {
  for (uint32_t dt = 1; dt <= 4; ++dt) {
    for (uint64_t n : {1ull, 2ull, 3ull, 7ull, 31ull, 64ull, 65ull, 200ull, 1000ull, 4097ull}) {
      for (uint32_t cl : {6u, 10u, 15u}) {
        const uint64_t stored = stored_frame_size(dt, n);
        for (uint64_t cap : {stored, stored - 16, uint64_t{100}, ~uint64_t{0}}) {
          uint64_t expect = kNoEscapeBudget;
          for (uint64_t e = 0; e <= n; ++e) {
            const uint64_t s = coded_layout(dt, n, cl, e).frame_size;
            if (s < stored && s <= cap) expect = e;
          }
          ASSERT_EQ(max_escapes(dt, n, cl, cap), expect) << dt << " " << n << " " << cl << " " << cap;
        }
      }
    }
  }
  EXPECT_EQ(max_escapes(1, 0, 10, 1000), kNoEscapeBudget);
  EXPECT_EQ(max_escapes(9, 10, 10, 1000), kNoEscapeBudget);
}

TEST(Layout, CompressBoundIsStoredSize) {
  EXPECT_EQ(compress_bound(Dtype::bf16, 0), 64u);
  EXPECT_EQ(compress_bound(Dtype::bf16, 1), 80u);
  EXPECT_EQ(compress_bound(Dtype::fp32, 4), 80u);
  EXPECT_EQ(compress_bound(Dtype::fp8_e5m2, 17), 96u);
  EXPECT_EQ(compress_bound(Dtype::bf16, kMaxElems), 64u + (kMaxElems * 2));
  EXPECT_EQ(compress_bound(Dtype::bf16, kMaxElems + 1), 0u);
  EXPECT_EQ(compress_bound(static_cast<Dtype>(0), 10), 0u);
}

}  // namespace
}  // namespace splitzip
