// SPDX-License-Identifier: Apache-2.0
// Bad arguments get a clear status, never a crash: null pointers, invalid
// dtypes and chunk sizes, element counts over the format's limit, unknown
// backends, absurd thread counts. Every check runs on every available backend.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "test_data.h"

namespace szrel {
namespace {

using splitzip::CompressOptions;
using splitzip::DecompressOptions;
using splitzip::Dtype;
using splitzip::Status;

constexpr uint64_t kOverLimit = splitzip::kMaxElems + 1;

TEST(ReliabilityApiMisuse, CompressArguments) {
  const auto src = make_values(Dtype::bf16, 2048, 1, [](uint64_t, Rng& r) { return 120 + static_cast<uint32_t>(r.next() % 4); });
  std::vector<uint8_t> dst(splitzip::compress_bound(Dtype::bf16, 2048));
  for (const auto& b : available_backends()) {
    SCOPED_TRACE(b);
    CompressOptions o;
    o.backend = b.c_str();
    EXPECT_EQ(splitzip::compress(static_cast<Dtype>(0), src.data(), 10, dst.data(), dst.size(), o).status,
              Status::invalid_argument);
    EXPECT_EQ(splitzip::compress(static_cast<Dtype>(9), src.data(), 10, dst.data(), dst.size(), o).status,
              Status::invalid_argument);
    EXPECT_EQ(splitzip::compress(Dtype::bf16, nullptr, 10, dst.data(), dst.size(), o).status, Status::invalid_argument);
    EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), 10, nullptr, 100, o).status, Status::invalid_argument);
    EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), kOverLimit, dst.data(), dst.size(), o).status,
              Status::invalid_argument);
    for (uint32_t bad_chunk : {0u, 5u, 16u, 255u}) {
      CompressOptions c = o;
      c.chunk_log2 = bad_chunk;
      EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), 10, dst.data(), dst.size(), c).status,
                Status::invalid_argument)
          << bad_chunk;
    }
    // A codebook that breaks rule 9, or is for another dtype.
    splitzip::Codebook cb;
    cb.dtype = Dtype::bf16;
    cb.count = 0;
    CompressOptions c = o;
    c.codebook = &cb;
    EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), 2048, dst.data(), dst.size(), c).status, Status::bad_codebook);
    cb.count = 2;
    cb.entries[0] = cb.entries[1] = 120;
    EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), 2048, dst.data(), dst.size(), c).status, Status::bad_codebook);
    cb.entries[1] = 121;
    cb.dtype = Dtype::fp32;
    EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), 2048, dst.data(), dst.size(), c).status, Status::bad_codebook);

    // Absurd thread counts are clamped, and do not change the bytes.
    CompressOptions one = o;
    one.threads = 1;
    std::vector<uint8_t> want(dst.size());
    const splitzip::Result rw = splitzip::compress(Dtype::bf16, src.data(), 2048, want.data(), want.size(), one);
    ASSERT_TRUE(rw.ok());
    for (int t : {-5, 100000}) {
      CompressOptions c2 = o;
      c2.threads = t;
      const splitzip::Result r = splitzip::compress(Dtype::bf16, src.data(), 2048, dst.data(), dst.size(), c2);
      EXPECT_EQ(r.status, Status::ok) << t;
      EXPECT_TRUE(r.size == rw.size && std::memcmp(dst.data(), want.data(), r.size) == 0) << t;
    }
  }
  CompressOptions o;
  for (const char* name : {"", "nope", "REFERENCE"}) {
    o.backend = name;
    EXPECT_EQ(splitzip::compress(Dtype::bf16, src.data(), 10, dst.data(), dst.size(), o).status,
              Status::unknown_backend)
        << name;
  }
  EXPECT_EQ(splitzip::compress_bound(static_cast<Dtype>(0), 5), 0u);
  EXPECT_EQ(splitzip::compress_bound(Dtype::bf16, kOverLimit), 0u);
}

TEST(ReliabilityApiMisuse, DecompressArguments) {
  const auto src = make_values(Dtype::bf16, 2048, 2, [](uint64_t, Rng& r) { return 120 + static_cast<uint32_t>(r.next() % 4); });
  std::vector<uint8_t> f(splitzip::compress_bound(Dtype::bf16, 2048));
  const splitzip::Result c = splitzip::compress(Dtype::bf16, src.data(), 2048, f.data(), f.size());
  ASSERT_TRUE(c.ok());
  std::vector<uint8_t> out(src.size());
  for (const auto& b : available_backends()) {
    SCOPED_TRACE(b);
    DecompressOptions o;
    o.backend = b.c_str();
    EXPECT_EQ(splitzip::decompress(nullptr, 100, out.data(), out.size(), o).status, Status::invalid_argument);
    EXPECT_EQ(splitzip::decompress(f.data(), c.size, nullptr, 10, o).status, Status::invalid_argument);
    EXPECT_EQ(splitzip::decompress(nullptr, 0, nullptr, 0, o).status, Status::truncated);  // rule 1
    const splitzip::Result empty = splitzip::decompress_frames(nullptr, 0, nullptr, 0, o);
    EXPECT_EQ(empty.status, Status::ok);  // no frames, no output
    EXPECT_EQ(empty.size, 0u);
    for (int t : {-3, 1 << 30}) {
      o.threads = t;
      const splitzip::Result r = splitzip::decompress(f.data(), c.size, out.data(), out.size(), o);
      EXPECT_EQ(r.status, Status::ok) << t;
      EXPECT_EQ(out, src) << t;
    }
  }
  DecompressOptions o;
  o.backend = "nope";
  EXPECT_EQ(splitzip::decompress(f.data(), c.size, out.data(), out.size(), o).status, Status::unknown_backend);
  splitzip::FrameInfo fi;
  EXPECT_EQ(splitzip::frame_info(f.data(), c.size, nullptr), Status::invalid_argument);
  EXPECT_EQ(splitzip::frame_info(nullptr, 0, &fi), Status::truncated);
  EXPECT_EQ(splitzip::frame_info(nullptr, 64, &fi), Status::invalid_argument);
}

TEST(ReliabilityApiMisuse, HelpersAndCodebooks) {
  splitzip::Codebook cb;
  const auto buf = random_bytes(200, 3);
  const void* bufs[1] = {buf.data()};
  const uint64_t ns[1] = {100};
  EXPECT_EQ(splitzip::calibrate(Dtype::bf16, bufs, ns, 1, nullptr), Status::invalid_argument);
  EXPECT_EQ(splitzip::calibrate(Dtype::bf16, bufs, ns, 0, &cb), Status::invalid_argument);
  EXPECT_EQ(splitzip::calibrate(Dtype::bf16, nullptr, nullptr, 1, &cb), Status::invalid_argument);
  EXPECT_EQ(splitzip::codebook_deserialize(nullptr, 32, &cb), Status::invalid_argument);
  EXPECT_EQ(splitzip::codebook_deserialize(buf.data(), 31, &cb), Status::truncated);
  EXPECT_EQ(splitzip::codebook_load("/nonexistent/dir/x.szcb", &cb), Status::io_error);
  EXPECT_EQ(splitzip::backend_name(splitzip::backend_count()), nullptr);
  EXPECT_FALSE(splitzip::backend_available(nullptr));
  EXPECT_FALSE(splitzip::backend_available("nope"));
  EXPECT_NE(splitzip::status_name(static_cast<Status>(999)), nullptr);
  EXPECT_NE(splitzip::status_message(static_cast<Status>(-1)), nullptr);
  EXPECT_NE(splitzip::dtype_name(static_cast<Dtype>(0)), nullptr);
  EXPECT_EQ(splitzip::dtype_bytes(static_cast<Dtype>(0)), 0u);
  Dtype d;
  EXPECT_FALSE(splitzip::parse_dtype(nullptr, &d));
  EXPECT_FALSE(splitzip::parse_dtype("bf17", &d));
  EXPECT_EQ(splitzip::xxh64(nullptr, 0), 0xEF46DB3751D8E999ull);  // XXH64 of nothing, seed 0
}

}  // namespace
}  // namespace szrel
