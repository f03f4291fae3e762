// SPDX-License-Identifier: Apache-2.0
// Frame-layer API contract: argument checks, capacity handling, codebook
// checks, frame_info, the backend name in Result.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/layout.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

TEST(FrameApi, CompressArgumentChecks) {
  std::vector<uint8_t> src(64), dst(1024);
  CompressOptions o;
  EXPECT_EQ(compress(static_cast<Dtype>(0), src.data(), 4, dst.data(), dst.size()).status, Status::invalid_argument);
  EXPECT_EQ(compress(static_cast<Dtype>(6), src.data(), 4, dst.data(), dst.size()).status, Status::invalid_argument);
  EXPECT_EQ(compress(Dtype::bf16, nullptr, 4, dst.data(), dst.size()).status, Status::invalid_argument);
  EXPECT_EQ(compress(Dtype::bf16, src.data(), 4, nullptr, 0).status, Status::invalid_argument);
  EXPECT_EQ(compress(Dtype::bf16, src.data(), kMaxElems + 1, dst.data(), dst.size()).status,
            Status::invalid_argument);
  for (uint32_t cl : {0u, 5u, 16u, 255u}) {
    o.chunk_log2 = cl;
    EXPECT_EQ(compress(Dtype::bf16, src.data(), 4, dst.data(), dst.size(), o).status, Status::invalid_argument) << cl;
  }
  o.chunk_log2 = 6;
  EXPECT_EQ(compress(Dtype::bf16, src.data(), 4, dst.data(), dst.size(), o).status, Status::ok);
  o.chunk_log2 = 15;
  EXPECT_EQ(compress(Dtype::bf16, src.data(), 4, dst.data(), dst.size(), o).status, Status::ok);
  // n = 0 with a null source is a valid (stored, empty) frame.
  const Result r = compress(Dtype::fp8_e5m2, nullptr, 0, dst.data(), dst.size());
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.size, 64u);
}

TEST(FrameApi, CodebookChecks) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, 1000, 1);
  std::vector<uint8_t> dst(compress_bound(Dtype::fp16, 1000));
  Codebook cb = synth::body_codebook(Dtype::bf16);  // wrong dtype
  CompressOptions o;
  o.codebook = &cb;
  EXPECT_EQ(compress(Dtype::fp16, in.data(), 1000, dst.data(), dst.size(), o).status, Status::bad_codebook);
  cb = synth::body_codebook(Dtype::fp16);
  EXPECT_EQ(compress(Dtype::fp16, in.data(), 1000, dst.data(), dst.size(), o).status, Status::ok);
  cb.entries[1] = cb.entries[0];
  EXPECT_EQ(compress(Dtype::fp16, in.data(), 1000, dst.data(), dst.size(), o).status, Status::bad_codebook);
  cb = Codebook{};
  cb.dtype = Dtype::fp16;
  EXPECT_EQ(compress(Dtype::fp16, in.data(), 1000, dst.data(), dst.size(), o).status, Status::bad_codebook);
}

TEST(FrameApi, CapacityBetweenCodedAndBound) {
  const uint64_t n = 10000;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 2);
  std::vector<uint8_t> full(compress_bound(Dtype::bf16, n));
  const Result rf = compress(Dtype::bf16, in.data(), n, full.data(), full.size());
  ASSERT_TRUE(rf.ok());
  ASSERT_LT(rf.size, full.size());
  // Exactly the coded size is enough, and gives the same bytes.
  std::vector<uint8_t> tight(rf.size);
  const Result rt = compress(Dtype::bf16, in.data(), n, tight.data(), tight.size());
  ASSERT_EQ(rt.status, Status::ok);
  EXPECT_EQ(std::memcmp(tight.data(), full.data(), rf.size), 0);
  // One byte less is not, and the format does not switch to stored for it.
  EXPECT_EQ(compress(Dtype::bf16, in.data(), n, tight.data(), rf.size - 1).status, Status::dst_too_small);
  EXPECT_EQ(compress(Dtype::bf16, in.data(), n, tight.data(), 63).status, Status::dst_too_small);
  // Stored frames need their full size.
  const auto rnd = synth::generate(synth::Generator::random_bits, Dtype::bf16, n, 2);
  // (compress_bound also counts the block checks of a checksummed frame.)
  const uint64_t stored = 64 + 2 * n;
  CompressOptions nock;
  nock.checksum = false;
  EXPECT_EQ(compress(Dtype::bf16, rnd.data(), n, full.data(), stored - 1, nock).status, Status::dst_too_small);
  EXPECT_EQ(compress(Dtype::bf16, rnd.data(), n, full.data(), stored, nock).status, Status::ok);
  CompressOptions ck;
  ck.checksum = true;
  EXPECT_EQ(compress(Dtype::bf16, rnd.data(), n, full.data(), stored, ck).status, Status::dst_too_small);
  EXPECT_EQ(compress(Dtype::bf16, rnd.data(), n, full.data(), full.size(), ck).size, full.size());
  // Escapes above the budget of a capacity below the stored size: the
  // stored fallback does not fit either (never a write past capacity).
  const auto heavy = synth::generate(synth::Generator::heavy_tail, Dtype::bf16, n, 2, {0.2});
  std::vector<uint8_t> small(rf.size);
  EXPECT_EQ(compress(Dtype::bf16, heavy.data(), n, small.data(), small.size()).status, Status::dst_too_small);
}

TEST(FrameApi, DecompressArgumentChecks) {
  std::vector<uint8_t> buf(64);
  EXPECT_EQ(decompress(nullptr, 10, buf.data(), buf.size()).status, Status::invalid_argument);
  EXPECT_EQ(decompress(buf.data(), buf.size(), nullptr, 10).status, Status::invalid_argument);
  EXPECT_EQ(decompress(buf.data(), 0, buf.data(), buf.size()).status, Status::truncated);
  EXPECT_EQ(decompress(buf.data(), buf.size(), buf.data(), buf.size()).status, Status::bad_magic);
  FrameInfo info;
  EXPECT_EQ(frame_info(buf.data(), buf.size(), nullptr), Status::invalid_argument);
  EXPECT_EQ(frame_info(nullptr, 64, &info), Status::invalid_argument);
}

TEST(FrameApi, FrameInfoFieldsAndBackendName) {
  const uint64_t n = 3000;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp32, n, 3);
  std::vector<uint8_t> f(compress_bound(Dtype::fp32, n));
  CompressOptions o;
  o.chunk_log2 = 12;
  o.checksum = true;
  const Result r = compress(Dtype::fp32, in.data(), n, f.data(), f.size(), o);
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r.backend, nullptr);
#if !defined(SPLITZIP_HAVE_CPU) && !defined(SPLITZIP_HAVE_CUDA)
  EXPECT_STREQ(r.backend, "reference");
#endif
  FrameInfo info;
  ASSERT_EQ(frame_info(f.data(), r.size, &info), Status::ok);
  EXPECT_EQ(info.version, 2u);
  EXPECT_EQ(info.dtype, Dtype::fp32);
  EXPECT_FALSE(info.stored);
  EXPECT_TRUE(info.has_checksum);
  EXPECT_EQ(info.chunk_log2, 12u);
  EXPECT_EQ(info.n_elems, n);
  EXPECT_EQ(info.frame_size, r.size);
  EXPECT_EQ(info.decoded_size, n * 4);
  EXPECT_EQ(info.content_checksum, test::expected_content_checksum(in.data(), in.size()));
  EXPECT_EQ(info.checksum_block_log2, 16u);
  EXPECT_EQ(info.checksum_blocks, 1u);  // 12000 bytes
  EXPECT_EQ(info.codebook.dtype, Dtype::fp32);
  EXPECT_EQ(info.codebook.count, 16);
  EXPECT_EQ(info.frame_size, coded_layout(3, n, 12, info.escape_count, 1).frame_size);
  std::vector<uint8_t> out(n * 4);
  DecompressOptions d;
  d.backend = "reference";
  const Result dr = decompress(f.data(), r.size, out.data(), out.size(), d);
  EXPECT_EQ(dr.status, Status::ok);
  EXPECT_STREQ(dr.backend, "reference");
}

TEST(FrameApi, DynamicCodebookEqualsExplicitTopSixteen) {
  const uint64_t n = 50000;
  const auto in = synth::generate(synth::Generator::heavy_tail, Dtype::bf16, n, 8);
  Histogram h(Dtype::bf16);
  h.add(in.data(), n);
  const Codebook cb = h.codebook();
  std::vector<uint8_t> a(compress_bound(Dtype::bf16, n)), b(a.size());
  CompressOptions o;
  const Result ra = compress(Dtype::bf16, in.data(), n, a.data(), a.size(), o);
  o.codebook = &cb;
  const Result rb = compress(Dtype::bf16, in.data(), n, b.data(), b.size(), o);
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_EQ(ra.size, rb.size);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), ra.size), 0);
}

}  // namespace
}  // namespace splitzip

namespace splitzip {
namespace {

// FORMAT.md 7: a stream of zero bytes is a valid stream of zero frames and
// decodes to zero bytes; decompress() of a single frame needs a frame.
TEST(EmptyStream, ZeroFramesZeroBytes) {
  uint8_t buf[16] = {};
  for (const void* src : {static_cast<const void*>(nullptr), static_cast<const void*>(buf)}) {
    Result r = decompress_frames(src, 0, nullptr, 0);
    EXPECT_EQ(r.status, Status::ok);
    EXPECT_EQ(r.size, 0u);
    r = decompress_frames(src, 0, buf, sizeof buf);
    EXPECT_EQ(r.status, Status::ok);
    EXPECT_EQ(r.size, 0u);
    for (size_t i = 0; i < backend_count(); ++i) {
      const char* be = backend_name(i);
      if (!backend_available(be)) continue;
      DecompressOptions o;
      o.backend = be;
      r = decompress_frames(src, 0, buf, sizeof buf, o);
      EXPECT_EQ(r.status, Status::ok) << be;
      EXPECT_EQ(r.size, 0u) << be;
    }
    EXPECT_EQ(decompress(src, 0, buf, sizeof buf).status, Status::truncated);
    FrameIterator it(src, 0);
    FrameView v;
    v.data = buf;
    EXPECT_EQ(it.next(&v), Status::ok);
    EXPECT_EQ(v.data, nullptr);
    EXPECT_EQ(it.offset(), 0u);
    EXPECT_EQ(it.next(&v), Status::ok);  // stays at the end
    EXPECT_EQ(v.data, nullptr);
  }
  // A frame of zero elements is not an empty stream: one 64-byte frame.
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, 0));
  const Result c = compress(Dtype::bf16, buf, 0, f.data(), f.size());
  ASSERT_EQ(c.status, Status::ok);
  EXPECT_EQ(c.size, 64u);
  FrameIterator it(f.data(), c.size);
  FrameView v;
  ASSERT_EQ(it.next(&v), Status::ok);
  EXPECT_EQ(v.data, f.data());
  EXPECT_EQ(v.info.n_elems, 0u);
  EXPECT_EQ(it.next(&v), Status::ok);
  EXPECT_EQ(v.data, nullptr);
  EXPECT_EQ(decompress_frames(f.data(), c.size, nullptr, 0).status, Status::ok);
}

TEST(FrameIteratorApi, WalksFramesAndStopsAtTheFirstBadOne) {
  std::vector<uint8_t> stream;
  std::vector<uint64_t> offsets, sizes;
  const uint64_t ns[] = {1000, 0, 40000, 7};
  for (int k = 0; k < 4; ++k) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, ns[k], 50 + k);
    std::vector<uint8_t> f(compress_bound(Dtype::bf16, ns[k]));
    CompressOptions o;
    o.checksum = k % 2 == 0;
    const Result r = compress(Dtype::bf16, in.data(), ns[k], f.data(), f.size(), o);
    ASSERT_EQ(r.status, Status::ok);
    offsets.push_back(stream.size());
    sizes.push_back(r.size);
    stream.insert(stream.end(), f.begin(), f.begin() + static_cast<std::ptrdiff_t>(r.size));
  }
  FrameIterator it(stream.data(), stream.size());
  FrameView v;
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(it.next(&v), Status::ok) << k;
    ASSERT_NE(v.data, nullptr);
    EXPECT_EQ(v.offset, offsets[k]);
    EXPECT_EQ(v.size, sizes[k]);
    EXPECT_EQ(v.data, stream.data() + offsets[k]);
    EXPECT_EQ(v.info.n_elems, ns[k]);
    EXPECT_EQ(v.info.version, 2u);
    EXPECT_EQ(v.info.checksum_blocks, k % 2 == 0 ? checksum_blocks(2 * ns[k]) : 0u);
  }
  ASSERT_EQ(it.next(&v), Status::ok);
  EXPECT_EQ(v.data, nullptr);
  EXPECT_EQ(it.offset(), stream.size());
  // A bad magic in the third frame: two frames, then BAD_MAGIC at its offset, sticky.
  stream[offsets[2]] ^= 1;
  FrameIterator bad(stream.data(), stream.size());
  ASSERT_EQ(bad.next(&v), Status::ok);
  ASSERT_EQ(bad.next(&v), Status::ok);
  EXPECT_EQ(bad.next(&v), Status::bad_magic);
  EXPECT_EQ(bad.offset(), offsets[2]);
  EXPECT_EQ(bad.next(&v), Status::bad_magic);
  EXPECT_EQ(v.data, nullptr);
  EXPECT_EQ(bad.next(nullptr), Status::invalid_argument);
  FrameIterator null_src(nullptr, 10);
  EXPECT_EQ(null_src.next(&v), Status::invalid_argument);
}

TEST(FrameHeaderInfo, RulesOneToTenOnSixtyFourBytes) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, 5000, 2);
  std::vector<uint8_t> f(compress_bound(Dtype::fp16, 5000));
  CompressOptions o;
  o.checksum = true;
  const Result r = compress(Dtype::fp16, in.data(), 5000, f.data(), f.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  // Only the 64 header bytes, in a buffer of exactly 64: rule 11 is the caller's.
  std::vector<uint8_t> hdr(f.begin(), f.begin() + 64);
  FrameInfo info, full;
  ASSERT_EQ(frame_header_info(hdr.data(), &info), Status::ok);
  ASSERT_EQ(frame_info(f.data(), r.size, &full), Status::ok);
  EXPECT_EQ(info.frame_size, r.size);
  EXPECT_EQ(info.content_checksum, full.content_checksum);
  EXPECT_EQ(info.checksum_blocks, full.checksum_blocks);
  EXPECT_EQ(frame_info(hdr.data(), 64, &full), Status::truncated);
  hdr[49] = 1;  // mode
  EXPECT_EQ(frame_header_info(hdr.data(), &info), Status::header_corrupt);
  EXPECT_EQ(frame_header_info(nullptr, &info), Status::invalid_argument);
  EXPECT_EQ(frame_header_info(hdr.data(), nullptr), Status::invalid_argument);
}

}  // namespace
}  // namespace splitzip
