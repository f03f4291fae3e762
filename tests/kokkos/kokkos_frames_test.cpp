// SPDX-License-Identifier: Apache-2.0
// Whole frames through the public API with backend "kokkos": identical to the
// reference frames (dynamic and fixed codebooks, checksums, every chunk size,
// real and synthetic data) and cross-decodable, plus the golden cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

using synth::Generator;

class KokkosFrames : public ::testing::TestWithParam<Dtype> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kokkos_runs_host_buffers());
  }
};

TEST_P(KokkosFrames, SyntheticAllGenerators) {
  const Dtype d = GetParam();
  const Generator gens[] = {Generator::gaussian_kv, Generator::heavy_tail, Generator::all_escape,
                            Generator::random_bits, Generator::special_values, Generator::exponent_shift};
  for (Generator g : gens)
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{33}, uint64_t{1023},
                       uint64_t{1024}, uint64_t{1025}, uint64_t{65537}}) {
      const auto src = synth::generate(g, d, n, n + 17);
      EXPECT_TRUE(matches_reference("kokkos", d, src.data(), n)) << synth::generator_name(g) << " n=" << n;
    }
}

TEST_P(KokkosFrames, OptionsChunkCodebookChecksum) {
  const Dtype d = GetParam();
  const uint64_t n = 40000;
  synth::Params p;
  p.escape_rate = 0.01;
  const auto src = synth::generate(Generator::heavy_tail, d, n, 11, p);
  const Codebook body = synth::body_codebook(d);
  for (uint32_t log2 = kMinChunkLog2; log2 <= kMaxChunkLog2; ++log2)
    for (bool checksum : {false, true})
      for (const Codebook* cb : {static_cast<const Codebook*>(nullptr), &body}) {
        CompressOptions o;
        o.chunk_log2 = log2;
        o.checksum = checksum;
        o.codebook = cb;
        EXPECT_TRUE(matches_reference("kokkos", d, src.data(), n, o))
            << "chunk_log2=" << log2 << " checksum=" << checksum << " codebook=" << (cb ? "body" : "dynamic");
      }
}

// Escape-heavy input near the coded/stored threshold: both backends must make
// the same FORMAT.md 4.4 choice.
TEST_P(KokkosFrames, StoredDecisionNearThreshold) {
  const Dtype d = GetParam();
  const uint64_t n = 9000;
  for (double rate : {0.05, 0.1, 0.2, 0.3, 0.45, 0.6}) {
    synth::Params p;
    p.escape_rate = rate;
    const auto src = synth::generate(Generator::heavy_tail, d, n, 21, p);
    const Codebook body = synth::body_codebook(d);
    CompressOptions o;
    o.codebook = &body;
    EXPECT_TRUE(matches_reference("kokkos", d, src.data(), n, o)) << "escape_rate=" << rate;
  }
}

TEST_P(KokkosFrames, RealData) {
  const Dtype d = GetParam();
  const auto inputs = real_inputs(d);
  ASSERT_FALSE(inputs.empty());
  for (const auto& in : inputs) {
    EXPECT_TRUE(matches_reference("kokkos", d, in.bytes.data(), in.n)) << in.name;
    CompressOptions o;
    o.checksum = true;
    o.chunk_log2 = 15;
    EXPECT_TRUE(matches_reference("kokkos", d, in.bytes.data(), in.n, o)) << in.name << " checksum, chunk 2^15";
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, KokkosFrames, ::testing::ValuesIn(kAllDtypes),
                         [](const ::testing::TestParamInfo<Dtype>& i) { return std::string(dtype_name(i.param)); });

// A stream of frames of mixed dtypes, written by one backend and read back by
// the other.
TEST(KokkosFrameStream, MixedDtypesCrossDecode) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  std::vector<uint8_t> expected;
  std::vector<uint8_t> stream_kk, stream_ref;
  for (Dtype d : kAllDtypes) {
    const uint64_t n = 3000 + static_cast<uint64_t>(d);
    const auto src = synth::generate(Generator::gaussian_kv, d, n, 40 + static_cast<uint64_t>(d));
    expected.insert(expected.end(), src.begin(), src.end());
    for (auto* pair : {&stream_kk, &stream_ref}) {
      std::vector<uint8_t> f(compress_bound(d, n));
      CompressOptions o;
      o.backend = pair == &stream_kk ? "kokkos" : "reference";
      const Result r = compress(d, src.data(), n, f.data(), f.size(), o);
      ASSERT_EQ(r.status, Status::ok);
      pair->insert(pair->end(), f.begin(), f.begin() + static_cast<long>(r.size));
    }
  }
  ASSERT_TRUE(bytes_equal(stream_kk, stream_ref));
  std::vector<uint8_t> out(expected.size());
  DecompressOptions o;
  o.backend = "kokkos";
  const Result r = decompress_frames(stream_ref.data(), stream_ref.size(), out.data(), out.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_STREQ(r.backend, "kokkos");
  EXPECT_TRUE(bytes_equal(out, expected));
}

}  // namespace
}  // namespace splitzip::test
