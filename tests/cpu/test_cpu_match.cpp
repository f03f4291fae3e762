// SPDX-License-Identifier: Apache-2.0
// The CPU backend produces the reference's bytes, and each decodes the
// other's frames: every runnable Highway target forced in turn, 1/2/3/7
// threads, every dtype, edge sizes, real KV and escape-rich synthetic data.
#include <gtest/gtest.h>

#include <vector>

#include "tests/cpu/cpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

using cpu_test::kDtypes;
using cpu_test::kThreads;

class CpuMatch : public cpu_test::PerTarget {};

// Sizes around every step the kernels have: tiny, 3-bit groups of 8, vector
// widths (16..128 elements per vector, two vectors per step) and chunk
// sizes, each minus one, exact and plus one.
const uint64_t kEdgeSizes[] = {0,   1,   2,   3,    5,    7,    8,    9,    15,   16,   17,
                               31,  32,  33,  63,   64,   65,   127,  128,  129,  255,  256,
                               257, 511, 512, 513,  1023, 1024, 1025, 2047, 2048, 2049, 4095,
                               4096, 4097, 3 * 1024 + 5};

// Streaming (non-temporal) stores forced on and off: the large-buffer
// store path runs on every edge size too.
TEST_P(CpuMatch, EdgeSizesEveryDtypeAndThreadCount) {
  synth::Params p;
  p.escape_rate = 0.05;
  for (bool stream : {false, true}) {
  cpu::set_stream_min_bytes(stream ? 1 : 0);
  for (Dtype d : kDtypes) {
    const Codebook body5 = cpu_test::body_prefix(d, 5);
    for (uint64_t n : kEdgeSizes) {
      const auto heavy = synth::generate(synth::Generator::heavy_tail, d, n, 7 + n, p);
      const auto gauss = synth::generate(synth::Generator::gaussian_kv, d, n, 11 + n);
      for (int t : kThreads) {
        for (uint32_t chunk_log2 : {6u, 10u}) {
          CompressOptions o;
          o.threads = t;
          o.chunk_log2 = chunk_log2;
          o.checksum = (n + t + chunk_log2) % 2 == 1;  // half the cases with the block checksum
          SCOPED_TRACE(::testing::Message() << dtype_name(d) << " n=" << n << " threads=" << t
                                            << " chunk_log2=" << chunk_log2 << " checksum=" << o.checksum);
          EXPECT_TRUE(test::matches_reference("cpu", d, heavy.data(), n, o)) << "stream=" << stream;
          EXPECT_TRUE(test::matches_reference("cpu", d, gauss.data(), n, o)) << "stream=" << stream;
          o.codebook = &body5;  // fixed codebook, count < 16, many escapes
          EXPECT_TRUE(test::matches_reference("cpu", d, heavy.data(), n, o)) << "stream=" << stream;
        }
      }
    }
  }
  }
  cpu::set_stream_min_bytes(0);
}

// Sizes at checksum block edges (65535, 65536, 65537 bytes and several
// blocks): thread ranges are whole blocks, each hashed by its thread.
// Checksum on and off, dynamic and given codebook, streaming stores on and
// off, 1/2/3/7 threads.
TEST_P(CpuMatch, ChecksumBlockEdges) {
  synth::Params p;
  p.escape_rate = 0.02;
  for (Dtype d : kDtypes) {
    const uint64_t per_block = 65536 / dtype_bytes(d);
    const Codebook body5 = cpu_test::body_prefix(d, 5);
    for (uint64_t n : {per_block / 2, per_block - 1, per_block, per_block + 1, per_block + per_block / 64,
                       2 * per_block + 1, 5 * per_block + 333}) {
      const auto in = synth::generate(synth::Generator::heavy_tail, d, n, 3 + n, p);
      for (bool stream : {false, true}) {
        cpu::set_stream_min_bytes(stream ? 1 : 0);
        for (int t : kThreads) {
          for (bool checksum : {false, true}) {
            for (const Codebook* cb : {static_cast<const Codebook*>(nullptr), &body5}) {
              CompressOptions o;
              o.threads = t;
              o.checksum = checksum;
              o.codebook = cb;
              o.chunk_log2 = cb ? 15 : 10;  // fp32: a chunk of two blocks
              EXPECT_TRUE(test::matches_reference("cpu", d, in.data(), n, o))
                  << dtype_name(d) << " n=" << n << " stream=" << stream << " threads=" << t
                  << " checksum=" << checksum << " given codebook=" << (cb != nullptr);
            }
          }
        }
      }
    }
  }
  cpu::set_stream_min_bytes(0);
}

TEST_P(CpuMatch, RealKvEveryDtype) {
  for (Dtype d : kDtypes) {
    const auto inputs = test::real_inputs(d);
    ASSERT_FALSE(inputs.empty()) << dtype_name(d);
    for (const auto& in : inputs) {
      for (int t : kThreads) {
        CompressOptions o;
        o.threads = t;
        for (bool checksum : {false, true}) {
          o.checksum = checksum;
          SCOPED_TRACE(::testing::Message() << in.name << " threads=" << t << " checksum=" << checksum);
          EXPECT_TRUE(test::matches_reference("cpu", d, in.bytes.data(), in.n, o));
        }
      }
    }
  }
}

// Larger than one kernel step (2^15 elements) so threads split mid-buffer
// and steps end inside a thread's range; odd n, several chunk sizes.
TEST_P(CpuMatch, EscapeRichSynthetic) {
  const uint64_t n = 100003;
  struct Gen {
    synth::Generator g;
    double rate;
  };
  const Gen gens[] = {{synth::Generator::heavy_tail, 0.01},   {synth::Generator::heavy_tail, 0.2},
                      {synth::Generator::gaussian_kv, 0},     {synth::Generator::exponent_shift, 0},
                      {synth::Generator::special_values, 0},  {synth::Generator::random_bits, 0},
                      {synth::Generator::all_escape, 0}};
  for (Dtype d : kDtypes) {
    for (const Gen& g : gens) {
      synth::Params p;
      p.escape_rate = g.rate;
      const auto in = synth::generate(g.g, d, n, 99, p);
      ASSERT_EQ(in.size(), n * dtype_bytes(d));
      for (int t : kThreads) {
        for (uint32_t chunk_log2 : {6u, 10u, 15u}) {
          CompressOptions o;
          o.threads = t;
          o.chunk_log2 = chunk_log2;
          o.checksum = chunk_log2 != 10;
          SCOPED_TRACE(::testing::Message() << dtype_name(d) << " " << synth::generator_name(g.g)
                                            << " rate=" << g.rate << " threads=" << t
                                            << " chunk_log2=" << chunk_log2);
          EXPECT_TRUE(test::matches_reference("cpu", d, in.data(), n, o));
        }
      }
    }
  }
}

TEST_P(CpuMatch, GoldenCases) { EXPECT_TRUE(test::golden_cases_match("cpu")); }

SPLITZIP_INSTANTIATE_PER_TARGET(CpuMatch);

}  // namespace
}  // namespace splitzip
