// SPDX-License-Identifier: Apache-2.0
// The C API: the C99 self-test plus checks of the C/C++ mapping.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

extern "C" int splitzip_c_api_selftest(void);

namespace splitzip {
namespace {

TEST(CApi, C99SelfTest) { EXPECT_EQ(splitzip_c_api_selftest(), 0) << "failing line in c_api_check.c"; }

TEST(CApi, StatusNumbersMatchCpp) {
  for (int i = 0; i <= 26; ++i)
    EXPECT_STREQ(sz_status_name(static_cast<sz_status>(i)), status_name(static_cast<Status>(i)));
  EXPECT_EQ(SZ_CHECKSUM_MISMATCH, static_cast<int>(Status::checksum_mismatch));
  EXPECT_EQ(SZ_UNSUPPORTED_MEMORY, static_cast<int>(Status::unsupported_memory));
  for (int i : {28, 29})
    EXPECT_STREQ(sz_status_name(static_cast<sz_status>(i)), status_name(static_cast<Status>(i)));
  EXPECT_EQ(SZ_UNDEFINED_MODE, static_cast<int>(Status::undefined_mode));
}

// Every (dtype, mode) pair has a format since v3 (capacity x fp8_e4m3,
// FORMAT.md 4.6.7): every backend takes it, C and C++ alike. UNDEFINED_MODE
// stays for a pair without one and its message says so.
TEST(CApi, Fp8E4M3CapacityIsAccepted) {
  const uint64_t n = 4096;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp8_e4m3, n, 7);
  std::vector<uint8_t> dst(compress_bound(Dtype::fp8_e4m3, n));
  EXPECT_STREQ(status_name(Status::undefined_mode), "UNDEFINED_MODE");
  const std::string msg = status_message(Status::undefined_mode);
  EXPECT_NE(msg.find("dtype x mode pair"), std::string::npos) << msg;
  for (size_t i = 0; i < backend_count(); ++i) {
    const char* b = backend_name(i);
    if (!backend_available(b)) continue;
    SCOPED_TRACE(b);
    CompressOptions co;
    co.backend = b;
    for (Mode m : {Mode::capacity, Mode::fast}) {
      co.mode = m;
      const Status s = compress(Dtype::fp8_e4m3, in.data(), n, dst.data(), dst.size(), co).status;
      if (s == Status::unsupported_memory) continue;  // a device-only backend
      EXPECT_EQ(s, Status::ok);
    }
  }
  sz_compress_options o{};
  o.mode = SZ_MODE_CAPACITY;
  sz_result cr{};
  EXPECT_EQ(sz_compress(SZ_FP8_E4M3, in.data(), n, dst.data(), dst.size(), &o, &cr), SZ_OK);
  EXPECT_STREQ(sz_status_message(SZ_UNDEFINED_MODE), msg.c_str());
  EXPECT_EQ(sz_compress(SZ_FP8_E5M2, in.data(), n, dst.data(), dst.size(), &o, &cr), SZ_OK);
  o.mode = 7;  // not a mode at all: an invalid argument, not a pair
  EXPECT_EQ(sz_compress(SZ_FP8_E4M3, in.data(), n, dst.data(), dst.size(), &o, &cr), SZ_INVALID_ARGUMENT);
}

TEST(CApi, SameBytesAsCpp) {
  const uint64_t n = 20000;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 3);
    std::vector<uint8_t> a(compress_bound(d, n)), b(a.size());
    const Result r = compress(d, in.data(), n, a.data(), a.size());
    sz_result cr{};
    ASSERT_EQ(sz_compress(static_cast<sz_dtype>(d), in.data(), n, b.data(), b.size(), nullptr, &cr), SZ_OK);
    ASSERT_EQ(cr.size, r.size);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), r.size), 0);
    EXPECT_STREQ(cr.backend, r.backend);
  }
}

// sz_compress_options.mode: the capacity frame is the C++ API's (mode 1 in
// byte 49), decodes without a flag; other values are rejected.
TEST(CApi, ModeOption) {
  EXPECT_EQ(SZ_MODE_FAST, static_cast<int>(Mode::fast));
  EXPECT_EQ(SZ_MODE_CAPACITY, static_cast<int>(Mode::capacity));
  const uint64_t n = 70000;
  for (Dtype d : {Dtype::bf16, Dtype::fp16}) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 5);
    CompressOptions co;
    co.mode = Mode::capacity;
    std::vector<uint8_t> a(compress_bound(d, n)), b(a.size());
    const Result r = compress(d, in.data(), n, a.data(), a.size(), co);
    ASSERT_EQ(r.status, Status::ok);
    sz_compress_options o{};
    o.mode = SZ_MODE_CAPACITY;
    sz_result cr{};
    ASSERT_EQ(sz_compress(static_cast<sz_dtype>(d), in.data(), n, b.data(), b.size(), &o, &cr), SZ_OK);
    ASSERT_EQ(cr.size, r.size);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), r.size), 0);
    EXPECT_EQ(b[49], 1) << "mode byte";
    o.mode = SZ_MODE_FAST;
    std::vector<uint8_t> c(a.size());
    ASSERT_EQ(sz_compress(static_cast<sz_dtype>(d), in.data(), n, c.data(), c.size(), &o, &cr), SZ_OK);
    EXPECT_EQ(c[49], 0);
    EXPECT_LT(r.size, cr.size) << "capacity frames are smaller on KV-like data";
    // The frame info names the mode: a capacity frame's escape_count is its
    // coded exponent bytes, not escapes.
    sz_frame_info fi{}, ff{};
    ASSERT_EQ(sz_frame_info_read(b.data(), r.size, &fi), SZ_OK);
    ASSERT_EQ(sz_frame_info_read(c.data(), cr.size, &ff), SZ_OK);
    EXPECT_EQ(fi.mode, SZ_MODE_CAPACITY);
    EXPECT_EQ(ff.mode, SZ_MODE_FAST);
    EXPECT_EQ(fi.codebook.count, 0);
    EXPECT_GT(fi.escape_count, 0u);
    EXPECT_LT(fi.escape_count, n);
    std::vector<uint8_t> back(in.size());
    ASSERT_EQ(sz_decompress(b.data(), r.size, back.data(), back.size(), nullptr, &cr), SZ_OK);
    EXPECT_EQ(back, in);
    o.mode = 2;
    EXPECT_EQ(sz_compress(static_cast<sz_dtype>(d), in.data(), n, c.data(), c.size(), &o, &cr), SZ_INVALID_ARGUMENT);
  }
}

TEST(CApi, NullOutputsAndFiles) {
  EXPECT_EQ(sz_frame_info_read(nullptr, 0, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_calibrate(SZ_BF16, nullptr, nullptr, 0, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_validate_codebook(nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_codebook_load(nullptr, nullptr), SZ_INVALID_ARGUMENT);
  EXPECT_EQ(sz_compress(SZ_BF16, nullptr, 0, nullptr, 0, nullptr, nullptr), SZ_INVALID_ARGUMENT);
  sz_codebook cb{};
  cb.dtype = SZ_FP16;
  cb.count = 2;
  cb.entries[0] = 15;
  cb.entries[1] = 14;
  const std::string path = ::testing::TempDir() + "/splitzip_c_api.szcb";
  ASSERT_EQ(sz_codebook_save(&cb, path.c_str()), SZ_OK);
  sz_codebook back{};
  ASSERT_EQ(sz_codebook_load(path.c_str(), &back), SZ_OK);
  EXPECT_EQ(back.dtype, SZ_FP16);
  EXPECT_EQ(back.count, 2);
  EXPECT_EQ(back.entries[1], 14);
  // The C++ loader reads the same file.
  Codebook cpp;
  ASSERT_EQ(codebook_load(path.c_str(), &cpp), Status::ok);
  EXPECT_EQ(cpp.dtype, Dtype::fp16);
  std::remove(path.c_str());
  EXPECT_EQ(sz_codebook_load(path.c_str(), &back), SZ_IO_ERROR);
}

}  // namespace
}  // namespace splitzip

namespace splitzip {
namespace {

// corrupt_block travels through the C API; frame info fields match C++.
TEST(CApi, CorruptBlockAndBlockInfo) {
  const uint64_t n = 3 * 32768 + 5;  // bf16: 4 checksum blocks
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 8);
  std::vector<uint8_t> f(sz_compress_bound(SZ_BF16, n));
  sz_compress_options co{};
  co.no_checksum = 0;  // the default: checksum on
  sz_result r{};
  ASSERT_EQ(sz_compress(SZ_BF16, in.data(), n, f.data(), f.size(), &co, &r), SZ_OK);
  const uint64_t size = r.size;
  sz_frame_info ci{};
  FrameInfo info;
  ASSERT_EQ(sz_frame_info_read(f.data(), size, &ci), SZ_OK);
  ASSERT_EQ(frame_info(f.data(), size, &info), Status::ok);
  EXPECT_EQ(ci.version, 2u);
  EXPECT_EQ(ci.checksum_block_log2, 16u);
  EXPECT_EQ(ci.checksum_blocks, 4u);
  EXPECT_EQ(ci.checksum_blocks, info.checksum_blocks);
  EXPECT_EQ(ci.content_checksum, info.content_checksum);
  EXPECT_EQ(ci.frame_size, info.frame_size);
  EXPECT_EQ(ci.escape_count, info.escape_count);
  // Residual byte of element 3*32768 (first element of block 3).
  std::vector<uint8_t> out(2 * n);
  f[64 + 3 * 32768] ^= 1;
  r.corrupt_block = 0;
  EXPECT_EQ(sz_decompress(f.data(), size, out.data(), out.size(), nullptr, &r), SZ_CHECKSUM_MISMATCH);
  EXPECT_EQ(r.corrupt_block, 3u);
  EXPECT_EQ(sz_decompress_frames(f.data(), size, out.data(), out.size(), nullptr, &r), SZ_CHECKSUM_MISMATCH);
  EXPECT_EQ(r.corrupt_block, 3u);
  const Result cpp = decompress(f.data(), size, out.data(), out.size());
  EXPECT_EQ(cpp.corrupt_block, 3u);
  // Another fault: corrupt_block back to "none".
  f[0] ^= 1;
  EXPECT_EQ(sz_decompress(f.data(), size, out.data(), out.size(), nullptr, &r), SZ_BAD_MAGIC);
  EXPECT_EQ(r.corrupt_block, SZ_NO_BLOCK);
}

// The C iterator yields exactly what the C++ FrameIterator yields.
TEST(CApi, FrameIteratorMatchesCpp) {
  std::vector<uint8_t> stream;
  for (uint64_t n : {500ull, 0ull, 70000ull, 3ull}) {
    const auto in = synth::generate(synth::Generator::heavy_tail, Dtype::fp16, n, n + 1);
    std::vector<uint8_t> f(compress_bound(Dtype::fp16, n));
    CompressOptions o;
    o.checksum = n > 100;
    const Result r = compress(Dtype::fp16, in.data(), n, f.data(), f.size(), o);
    ASSERT_EQ(r.status, Status::ok);
    stream.insert(stream.end(), f.begin(), f.begin() + static_cast<std::ptrdiff_t>(r.size));
  }
  stream.resize(stream.size() + 10, 0);  // a partial trailing "frame"
  FrameIterator it(stream.data(), stream.size());
  sz_frame_iter cit;
  ASSERT_EQ(sz_frame_iter_init(&cit, stream.data(), stream.size()), SZ_OK);
  int frames = 0;
  for (;;) {
    FrameView v;
    sz_frame_view cv;
    const Status s = it.next(&v);
    const sz_status cs = sz_frame_iter_next(&cit, &cv);
    ASSERT_EQ(static_cast<int>(cs), static_cast<int>(s));
    EXPECT_EQ(sz_frame_iter_offset(&cit), it.offset());
    if (s != Status::ok || v.data == nullptr) {
      EXPECT_EQ(cv.data, nullptr);
      EXPECT_EQ(s, Status::truncated);
      break;
    }
    ++frames;
    EXPECT_EQ(cv.data, v.data);
    EXPECT_EQ(cv.size, v.size);
    EXPECT_EQ(cv.offset, v.offset);
    EXPECT_EQ(cv.info.n_elems, v.info.n_elems);
    EXPECT_EQ(cv.info.checksum_blocks, v.info.checksum_blocks);
    EXPECT_EQ(cv.info.codebook.count, v.info.codebook.count);
  }
  EXPECT_EQ(frames, 4);
}

TEST(CApi, HashesAndHeaderInfo) {
  const auto in = synth::generate(synth::Generator::random_bits, Dtype::bf16, 3000, 1);
  for (uint64_t len : {0ull, 5ull, 200ull, 6000ull}) {
    EXPECT_EQ(sz_xxh3_64(in.data(), len), xxh3_64(in.data(), len));
    EXPECT_EQ(sz_xxh64(in.data(), len, 9), xxh64(in.data(), len, 9));
  }
  EXPECT_EQ(sz_xxh3_64(nullptr, 5), 0u);
  std::vector<uint8_t> f(compress_bound(Dtype::bf16, 3000));
  CompressOptions nock;
  nock.checksum = false;
  const Result r = compress(Dtype::bf16, in.data(), 3000, f.data(), f.size(), nock);
  ASSERT_EQ(r.status, Status::ok);
  sz_frame_info ci{};
  ASSERT_EQ(sz_frame_header_info(f.data(), &ci), SZ_OK);
  EXPECT_EQ(ci.frame_size, r.size);
  EXPECT_EQ(ci.stored, 1);  // random bits
  EXPECT_EQ(ci.checksum_blocks, 0u);
  EXPECT_EQ(sz_frame_header_info(f.data(), nullptr), SZ_INVALID_ARGUMENT);
  f[51] = 1;
  EXPECT_EQ(sz_frame_header_info(f.data(), &ci), SZ_HEADER_CORRUPT);
  EXPECT_EQ(SZ_FORMAT_VERSION, static_cast<int>(kFormatVersion));
  EXPECT_EQ(SZ_MIN_FORMAT_VERSION, static_cast<int>(kMinFormatVersion));
}

}  // namespace
}  // namespace splitzip
