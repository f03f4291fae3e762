// SPDX-License-Identifier: Apache-2.0
// The bundled real KV sample: byte-exact round trips for every file and
// dtype, and the SplitZip ratio 2/(1.5+3e) once the measured header and
// per-chunk count overhead is accounted for.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/layout.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/compare.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

struct Coded {
  std::vector<uint8_t> frame;
  FrameInfo info;
};

Coded encode(const test::RealInput& in, const CompressOptions& o = {}) {
  Coded c;
  c.frame.resize(compress_bound(in.dtype, in.n));
  const Result r = compress(in.dtype, in.bytes.data(), in.n, c.frame.data(), c.frame.size(), o);
  EXPECT_EQ(r.status, Status::ok);
  c.frame.resize(r.size);
  EXPECT_EQ(frame_info(c.frame.data(), c.frame.size(), &c.info), Status::ok);
  return c;
}

TEST(RealData, AllFilesPresent) {
  EXPECT_EQ(test::real_inputs(Dtype::bf16).size(), 10u) << "data dir: " << test::data_dir();
  for (Dtype d : {Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) EXPECT_EQ(test::real_inputs(d).size(), 2u);
  for (const auto& in : test::real_inputs(Dtype::bf16)) EXPECT_EQ(in.n, 262144u) << in.name;
}

TEST(RealData, RoundTripEveryFileAndDtype) {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    for (const auto& in : test::real_inputs(d)) {
      SCOPED_TRACE(in.name);
      for (bool checksum : {false, true}) {
        CompressOptions o;
        o.checksum = checksum;
        const Coded c = encode(in, o);
        EXPECT_FALSE(c.info.stored);
        EXPECT_LT(c.frame.size(), in.bytes.size());
        std::vector<uint8_t> out(in.bytes.size());
        const Result r = decompress(c.frame.data(), c.frame.size(), out.data(), out.size());
        ASSERT_EQ(r.status, Status::ok) << status_name(r.status);
        EXPECT_TRUE(test::bytes_equal(out, in.bytes));
      }
    }
  }
}

// bf16: 1 residual byte + half a code byte per element, 3 bytes per escape.
// Predicted frame = header + n(1.5 + 3e) + 2 bytes per chunk; the only
// other bytes are <16-byte alignment gaps, far inside the 0.2% tolerance.
TEST(RealData, Bf16RatioMatchesSplitZipFormula) {
  for (const auto& in : test::real_inputs(Dtype::bf16)) {
    const Coded c = encode(in);
    ASSERT_FALSE(c.info.stored);
    const double n = static_cast<double>(in.n);
    const double e = static_cast<double>(c.info.escape_count) / n;
    const double n_chunks = std::ceil(n / 1024.0);
    const double overhead = 64.0 + 2.0 * n_chunks;  // header + escape counts
    const double predicted_ratio = 2.0 * n / (n * (1.5 + 3.0 * e) + overhead);
    const double ratio = static_cast<double>(in.bytes.size()) / static_cast<double>(c.frame.size());
    EXPECT_NEAR(ratio / predicted_ratio, 1.0, 0.002) << in.name << " ratio " << ratio << " predicted "
                                                     << predicted_ratio << " e=" << e;
    // Without overheads the ratio sits just under the paper's 2/(1.5+3e).
    const double paper = 2.0 / (1.5 + 3.0 * e);
    EXPECT_LT(ratio, paper);
    EXPECT_GT(ratio, paper * 0.997) << in.name;
    // The real sample's escape rate is near 0.01-0.03%.
    EXPECT_LT(e, 0.001) << in.name;
    std::printf("%-16s n=%llu E=%llu e=%.4f%% ratio=%.4f formula=%.4f\n", in.name.c_str(),
                static_cast<unsigned long long>(in.n), static_cast<unsigned long long>(c.info.escape_count),
                100 * e, ratio, paper);
  }
}

// Other dtypes: bits per element are W + 4 (+ escapes); check the measured
// size against the exact stream arithmetic.
TEST(RealData, OtherDtypesMatchStreamArithmetic) {
  for (Dtype d : {Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    for (const auto& in : test::real_inputs(d)) {
      const Coded c = encode(in);
      ASSERT_FALSE(c.info.stored);
      const uint32_t id = static_cast<uint32_t>(d);
      const DtypeGeometry g = geometry_of(id);
      const double n = static_cast<double>(in.n);
      const double predicted = 64.0 + n * g.res_bytes + (g.res_high ? 3.0 * n / 8 : 0) + n / 2 +
                               2.0 * std::ceil(n / 1024) + 3.0 * static_cast<double>(c.info.escape_count);
      EXPECT_NEAR(static_cast<double>(c.frame.size()) / predicted, 1.0, 0.002) << in.name;
    }
  }
}

TEST(RealData, CalibratedCodebookAcrossLayersRoundTrips) {
  // One codebook for all K layers (the CLI's calibrate flow).
  std::vector<const void*> bufs;
  std::vector<uint64_t> ns;
  const auto inputs = test::real_inputs(Dtype::bf16);
  for (const auto& in : inputs) {
    bufs.push_back(in.bytes.data());
    ns.push_back(in.n);
  }
  Codebook cb;
  ASSERT_EQ(calibrate(Dtype::bf16, bufs.data(), ns.data(), bufs.size(), &cb), Status::ok);
  EXPECT_EQ(cb.count, 16);
  for (const auto& in : inputs) {
    CompressOptions o;
    o.codebook = &cb;
    const Coded c = encode(in, o);
    std::vector<uint8_t> out(in.bytes.size());
    ASSERT_TRUE(decompress(c.frame.data(), c.frame.size(), out.data(), out.size()).ok());
    EXPECT_EQ(out, in.bytes) << in.name;
  }
}

}  // namespace
}  // namespace splitzip
