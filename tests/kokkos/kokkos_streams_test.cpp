// SPDX-License-Identifier: Apache-2.0
// The Kokkos backend against the reference below the frame layer: encoded
// streams byte for byte (including bytes it must not touch), escape budget
// handling, decoding of each other's streams, histograms, and the kernels
// called with an explicit execution space instance.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <string>
#include <vector>

#include "backends/kokkos/kokkos_decode.h"
#include "backends/kokkos/kokkos_encode.h"
#include "backends/kokkos/kokkos_histogram.h"
#include "backends/kokkos/kokkos_runtime.h"
#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/compare.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

using synth::Generator;

class KokkosStreams : public ::testing::TestWithParam<Dtype> {
 protected:
  void SetUp() override {
    ASSERT_NE(kokkos(), nullptr);
    ASSERT_TRUE(kokkos()->available());
    if (!kokkos()->accepts(MemoryKind::host)) GTEST_SKIP() << "Kokkos default space cannot reach host memory";
  }
};

// Encodes with both backends, requires identical buffers and escape counts,
// then decodes each backend's streams with the other and checks the values.
void check_identical(Dtype d, const std::vector<uint8_t>& src, uint64_t n, uint32_t chunk_log2,
                     const Codebook& cb, const std::string& what) {
  SCOPED_TRACE(what + " dtype=" + dtype_name(d) + " n=" + std::to_string(n) +
               " chunk_log2=" + std::to_string(chunk_log2));
  const Encoded ref = encode_streams(reference(), d, src.data(), n, chunk_log2, cb);
  const Encoded kk = encode_streams(kokkos(), d, src.data(), n, chunk_log2, cb);
  ASSERT_EQ(ref.status, Status::ok);
  ASSERT_EQ(kk.status, Status::ok);
  ASSERT_EQ(kk.escapes, ref.escapes);
  ASSERT_TRUE(bytes_equal(kk.frame, ref.frame));

  // Gaps are the frame layer's: zero them as it would, then cross-decode.
  FrameHeader h = header_for(d, n, chunk_log2, cb, ref.escapes);
  std::vector<uint8_t> frame(ref.frame.begin(), ref.frame.begin() + static_cast<long>(h.frame_size));
  zero_gaps(frame, layout_of(h));
  const uint64_t bytes = n * dtype_bytes(d);
  for (const Backend* be : {kokkos(), reference()}) {
    std::vector<uint8_t> out(bytes + 16, 0x5C);
    DecodeJob job{&h, frame.data(), out.data(), 0};
    ASSERT_EQ(be->decode(job), Status::ok) << be->name();
    EXPECT_TRUE(bytes_equal(out.data(), bytes, src.data(), bytes)) << be->name();
    for (uint64_t i = bytes; i < out.size(); ++i) ASSERT_EQ(out[i], 0x5C) << be->name() << " wrote past n";
  }
}

TEST_P(KokkosStreams, EdgeSizesAllGenerators) {
  const Dtype d = GetParam();
  const Generator gens[] = {Generator::gaussian_kv, Generator::heavy_tail, Generator::all_escape,
                            Generator::random_bits, Generator::special_values, Generator::exponent_shift};
  const uint64_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 1023, 1024, 1025, 3001};
  for (Generator g : gens)
    for (uint64_t n : sizes) {
      const auto src = synth::generate(g, d, n, 1000 + n);
      ASSERT_EQ(src.size(), n * dtype_bytes(d));
      check_identical(d, src, n, 6, top16(d, src, n), synth::generator_name(g));
      if (n >= 1023) check_identical(d, src, n, 10, synth::body_codebook(d), synth::generator_name(g));
    }
}

TEST_P(KokkosStreams, ChunkBoundariesEveryChunkSize) {
  const Dtype d = GetParam();
  synth::Params p;
  p.escape_rate = 0.05;  // escapes in most chunks, including the short last one
  for (uint32_t log2 = kMinChunkLog2; log2 <= kMaxChunkLog2; ++log2) {
    const uint64_t chunk = uint64_t{1} << log2;
    for (uint64_t n : {chunk - 1, chunk, chunk + 1, 3 * chunk - 1, 3 * chunk + 1}) {
      const auto src = synth::generate(Generator::heavy_tail, d, n, 7 * n + log2, p);
      check_identical(d, src, n, log2, top16(d, src, n), "heavy_tail");
    }
  }
}

TEST_P(KokkosStreams, SmallCodebooksEscapeRich) {
  const Dtype d = GetParam();
  const uint64_t n = 20000;
  synth::Params p;
  p.escape_rate = 0.3;
  const auto src = synth::generate(Generator::heavy_tail, d, n, 99, p);
  for (const uint8_t count : {uint8_t{1}, uint8_t{2}, uint8_t{5}, uint8_t{16}}) {
    Codebook cb = synth::body_codebook(d);
    for (uint32_t i = count; i < 16; ++i) cb.entries[i] = 0;
    cb.count = count;
    check_identical(d, src, n, 8, cb, "heavy_tail 30% with " + std::to_string(count) + "-entry codebook");
  }
}

TEST_P(KokkosStreams, RealData) {
  const Dtype d = GetParam();
  const auto inputs = real_inputs(d);
  ASSERT_FALSE(inputs.empty());
  for (const auto& in : inputs) {
    check_identical(d, in.bytes, in.n, kDefaultChunkLog2, top16(d, in.bytes, in.n), in.name);
    // An odd-length slice: short last chunk, odd code count, partial 3-bit byte.
    check_identical(d, in.bytes, 4099, 6, top16(d, in.bytes, 4099), in.name + " [0,4099)");
  }
}

TEST_P(KokkosStreams, EscapeBudgetLikeReference) {
  const Dtype d = GetParam();
  const uint64_t n = 5000;
  synth::Params p;
  p.escape_rate = 0.02;
  const auto src = synth::generate(Generator::heavy_tail, d, n, 5, p);
  const Codebook cb = top16(d, src, n);
  const Encoded full = encode_streams(reference(), d, src.data(), n, 10, cb);
  ASSERT_EQ(full.status, Status::ok);
  ASSERT_GT(full.escapes, 0u);
  for (uint64_t budget : {full.escapes - 1, uint64_t{0}}) {
    const Encoded ref = encode_streams(reference(), d, src.data(), n, 10, cb, budget);
    const Encoded kk = encode_streams(kokkos(), d, src.data(), n, 10, cb, budget);
    EXPECT_EQ(ref.status, Status::escape_overflow);
    EXPECT_EQ(kk.status, Status::escape_overflow);
  }
  const Encoded exact = encode_streams(kokkos(), d, src.data(), n, 10, cb, full.escapes);
  EXPECT_EQ(exact.status, Status::ok);
  EXPECT_TRUE(bytes_equal(exact.frame, full.frame));
}

TEST_P(KokkosStreams, HistogramMatchesReference) {
  const Dtype d = GetParam();
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{4095}, uint64_t{4096}, uint64_t{4097}, uint64_t{70001}}) {
    const auto src = synth::generate(Generator::random_bits, d, n, n);
    uint64_t a[256], b[256];
    for (int i = 0; i < 256; ++i) a[i] = b[i] = 12345;  // must be overwritten
    ASSERT_EQ(kokkos()->histogram(d, src.data(), n, a, 0), Status::ok);
    ASSERT_EQ(reference()->histogram(d, src.data(), n, b, 0), Status::ok);
    for (int e = 0; e < 256; ++e) ASSERT_EQ(a[e], b[e]) << "n=" << n << " exponent " << e;
  }
}

// The kernels take the execution space instance first, as kokkos-kernels
// does; a host instance must give the reference bytes too.
TEST_P(KokkosStreams, ExplicitHostSpaceInstance) {
  const Dtype d = GetParam();
  ASSERT_TRUE(kokkos_impl::ensure_runtime());
  const Kokkos::DefaultHostExecutionSpace space;
  const uint64_t n = 10007;
  const auto src = synth::generate(Generator::gaussian_kv, d, n, 3);
  const Codebook cb = top16(d, src, n);
  const Encoded ref = encode_streams(reference(), d, src.data(), n, 9, cb);
  ASSERT_EQ(ref.status, Status::ok);

  std::vector<uint8_t> frame(ref.frame.size(), 0xA5);
  EncodeJob job{d, src.data(), n, 9, &cb, frame.data(), frame.size() - 32, ~uint64_t{0}, 0};
  {
    std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());
    ASSERT_EQ(kokkos_impl::encode(space, job), Status::ok);
  }
  EXPECT_EQ(job.escape_count, ref.escapes);
  EXPECT_TRUE(bytes_equal(frame, ref.frame));

  const FrameHeader h = header_for(d, n, 9, cb, ref.escapes);
  zero_gaps(frame, layout_of(h));
  std::vector<uint8_t> out(n * dtype_bytes(d));
  uint64_t counts[256];
  {
    std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());
    ASSERT_EQ(kokkos_impl::decode(space, DecodeJob{&h, frame.data(), out.data(), 0}), Status::ok);
    ASSERT_EQ(kokkos_impl::histogram(space, d, src.data(), n, counts), Status::ok);
  }
  EXPECT_TRUE(bytes_equal(out, src));
  Histogram hist(d);
  hist.add(src.data(), n);
  for (uint32_t e = 0; e < 256; ++e) EXPECT_EQ(counts[e], hist.count(e));
}

TEST_P(KokkosStreams, RejectsBadArguments) {
  const Dtype d = GetParam();
  const Codebook cb = synth::body_codebook(d);
  std::vector<uint8_t> frame(4096);
  const std::vector<uint8_t> src(64 * dtype_bytes(d));
  EncodeJob no_cb{d, src.data(), 64, 6, nullptr, frame.data(), frame.size(), ~uint64_t{0}, 0};
  EXPECT_EQ(kokkos()->encode(no_cb), Status::invalid_argument);
  EncodeJob no_src{d, nullptr, 64, 6, &cb, frame.data(), frame.size(), ~uint64_t{0}, 0};
  EXPECT_EQ(kokkos()->encode(no_src), Status::invalid_argument);
  EncodeJob bad_dtype{static_cast<Dtype>(9), src.data(), 8, 6, &cb, frame.data(), frame.size(), ~uint64_t{0}, 0};
  EXPECT_EQ(kokkos()->encode(bad_dtype), Status::invalid_argument);
  uint64_t counts[256];
  EXPECT_EQ(kokkos()->histogram(d, nullptr, 5, counts, 0), Status::invalid_argument);
  EXPECT_EQ(kokkos()->histogram(d, src.data(), 5, nullptr, 0), Status::invalid_argument);
  EXPECT_EQ(kokkos()->decode(DecodeJob{nullptr, frame.data(), nullptr, 0}), Status::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, KokkosStreams, ::testing::ValuesIn(kAllDtypes),
                         [](const ::testing::TestParamInfo<Dtype>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace splitzip::test
