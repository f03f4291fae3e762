// SPDX-License-Identifier: Apache-2.0
// Round trips through the public API for every dtype: sizes around 0 and
// chunk boundaries, every generator, special values, small codebooks, the
// stored fallback (and the 4.4 decision itself), checksums, frame streams.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/header.h"
#include "core/layout.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

using synth::Generator;

const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

uint64_t count_escapes(Dtype d, const uint8_t* src, uint64_t n, const Codebook& cb) {
  Histogram h(d);
  h.add(src, n);
  uint64_t covered = 0;
  for (uint32_t c = 0; c < cb.count; ++c) covered += h.count(cb.entries[c]);
  return n - covered;
}

// Compresses, checks the FORMAT.md 4.4 choice independently, decompresses
// and compares. Returns the frame.
std::vector<uint8_t> round_trip(Dtype d, const std::vector<uint8_t>& in, uint64_t n,
                                const CompressOptions& opts = {}) {
  const uint64_t bound = compress_bound(d, n);
  std::vector<uint8_t> frame(bound + 32, 0xEE);  // guard bytes past the bound
  const Result r = compress(d, in.data(), n, frame.data(), bound, opts);
  EXPECT_EQ(r.status, Status::ok) << status_name(r.status);
  if (!r.ok()) return {};
  EXPECT_LE(r.size, bound);
  EXPECT_EQ(r.size % 16, 0u);
  for (uint64_t i = bound; i < frame.size(); ++i) EXPECT_EQ(frame[i], 0xEE) << "wrote past capacity";
  frame.resize(r.size);

  FrameInfo info;
  EXPECT_EQ(frame_info(frame.data(), frame.size(), &info), Status::ok);
  EXPECT_EQ(info.n_elems, n);
  EXPECT_EQ(info.dtype, d);
  EXPECT_EQ(info.frame_size, r.size);
  EXPECT_EQ(info.decoded_size, n * dtype_bytes(d));
  EXPECT_EQ(info.has_checksum, opts.checksum);
  if (opts.checksum) {
    EXPECT_EQ(info.content_checksum, test::expected_content_checksum(in.data(), n * dtype_bytes(d)));
    EXPECT_EQ(info.checksum_blocks, checksum_blocks(n * dtype_bytes(d)));
  }

  // The stored/coded choice (4.4), recomputed from the codebook the encoder
  // must have used.
  const Codebook cb = opts.codebook ? *opts.codebook : [&] {
    Histogram h(d);
    h.add(in.data(), n);
    return h.codebook();
  }();
  const uint32_t id = static_cast<uint32_t>(d);
  if (n == 0) {
    EXPECT_TRUE(info.stored);
  } else {
    const uint64_t e = count_escapes(d, in.data(), n, cb);
    const uint64_t checks = opts.checksum ? checksum_blocks(n * dtype_bytes(d)) : 0;
    const uint64_t coded = coded_layout(id, n, opts.chunk_log2, e, checks).frame_size;
    const bool expect_coded = coded < stored_frame_size(id, n, checks);
    EXPECT_EQ(!info.stored, expect_coded) << "E=" << e << " coded=" << coded;
    if (!info.stored) {
      EXPECT_EQ(info.escape_count, e);
      EXPECT_EQ(info.codebook.count, cb.count);
      EXPECT_EQ(std::memcmp(info.codebook.entries, cb.entries, 16), 0);
      EXPECT_EQ(r.size, coded);
    } else {
      EXPECT_EQ(r.size, stored_frame_size(id, n, checks));
    }
  }

  std::vector<uint8_t> out(n * dtype_bytes(d) + 16, 0xCD);
  const Result dr = decompress(frame.data(), frame.size(), out.data(), n * dtype_bytes(d));
  EXPECT_EQ(dr.status, Status::ok) << status_name(dr.status);
  EXPECT_EQ(dr.size, n * dtype_bytes(d));
  EXPECT_TRUE(test::bytes_equal(out.data(), dr.size, in.data(), n * dtype_bytes(d)));
  for (uint64_t i = n * dtype_bytes(d); i < out.size(); ++i) EXPECT_EQ(out[i], 0xCD) << "wrote past dst";
  // Deterministic: a second encode gives the same bytes.
  std::vector<uint8_t> again(bound);
  const Result r2 = compress(d, in.data(), n, again.data(), again.size(), opts);
  again.resize(r2.size);
  EXPECT_EQ(again, frame);
  return frame;
}

std::vector<uint64_t> sizes_for(uint32_t chunk_log2) {
  std::vector<uint64_t> s = {0, 1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 99, 255, 257};
  const uint64_t c = uint64_t{1} << chunk_log2;
  for (uint64_t k = 1; k <= 3; ++k) {
    s.push_back(k * c - 1);
    s.push_back(k * c);
    s.push_back(k * c + 1);
  }
  return s;
}

class RoundTrip : public ::testing::TestWithParam<Dtype> {};

TEST_P(RoundTrip, EveryGeneratorSizeAndChunk) {
  const Dtype d = GetParam();
  const Generator gens[] = {Generator::gaussian_kv, Generator::heavy_tail, Generator::random_bits,
                            Generator::special_values, Generator::exponent_shift};
  for (uint32_t cl : {6u, 7u, 10u, 15u}) {
    for (uint64_t n : sizes_for(cl)) {
      for (Generator g : gens) {
        SCOPED_TRACE(std::string(synth::generator_name(g)) + " n=" + std::to_string(n) + " chunk_log2=" +
                     std::to_string(cl));
        const auto in = synth::generate(g, d, n, 1000 + n);
        CompressOptions o;
        o.chunk_log2 = cl;
        round_trip(d, in, n, o);
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(RoundTrip, AllEscapeIsStored) {
  const Dtype d = GetParam();
  const Codebook cb = synth::body_codebook(d);
  synth::Params p;
  p.codebook = &cb;
  for (uint64_t n : {1ull, 2ull, 64ull, 1000ull, 4097ull}) {
    const auto in = synth::generate(Generator::all_escape, d, n, 5, p);
    ASSERT_EQ(count_escapes(d, in.data(), n, cb), n);
    CompressOptions o;
    o.codebook = &cb;
    o.chunk_log2 = 6;
    const auto frame = round_trip(d, in, n, o);
    FrameInfo info;
    ASSERT_EQ(frame_info(frame.data(), frame.size(), &info), Status::ok);
    EXPECT_TRUE(info.stored);
  }
}

TEST_P(RoundTrip, EscapeRatesAcrossTheStoredBoundary) {
  // Coded frames with many escapes, up to and past the point where storing wins.
  const Dtype d = GetParam();
  const Codebook cb = synth::body_codebook(d);
  bool saw_coded = false, saw_stored = false;
  for (double rate : {0.0, 0.001, 0.01, 0.05, 0.1, 0.13, 0.15, 0.17, 0.2, 0.3, 0.6, 1.0}) {
    synth::Params p;
    p.escape_rate = rate;
    const uint64_t n = 20000;
    const auto in = synth::generate(Generator::heavy_tail, d, n, 77, p);
    for (bool fixed : {false, true}) {
      CompressOptions o;
      if (fixed) o.codebook = &cb;
      const auto frame = round_trip(d, in, n, o);
      FrameInfo info;
      ASSERT_EQ(frame_info(frame.data(), frame.size(), &info), Status::ok);
      (info.stored ? saw_stored : saw_coded) = true;
    }
  }
  EXPECT_TRUE(saw_coded);
  EXPECT_TRUE(saw_stored);
}

TEST_P(RoundTrip, SpecialValuesWithEveryCodebookShape) {
  const Dtype d = GetParam();
  const uint64_t n = 3001;
  const auto in = synth::generate(Generator::special_values, d, n, 9);
  round_trip(d, in, n);
  // Codebooks of 1..16 entries taken from this data's own top list.
  Histogram h(d);
  h.add(in.data(), n);
  const Codebook full = h.codebook();
  for (uint8_t k = 1; k <= full.count; ++k) {
    Codebook cb = full;
    cb.count = k;
    for (int i = k; i < 16; ++i) cb.entries[i] = 0;
    CompressOptions o;
    o.codebook = &cb;
    o.chunk_log2 = 6;
    round_trip(d, in, n, o);
  }
}

TEST_P(RoundTrip, FewerThanSixteenDistinctExponents) {
  const Dtype d = GetParam();
  // Only exponents {body[0], body[1], body[2]}: dynamic codebook has 3 entries.
  Codebook three = synth::body_codebook(d);
  three.count = 3;
  for (int i = 3; i < 16; ++i) three.entries[i] = 0;
  // Random bits with the exponent field forced into three values.
  const uint64_t n = 5000;
  const auto base = synth::generate(Generator::random_bits, d, n, 3);
  std::vector<uint8_t> in(base);
  const uint32_t bytes = dtype_bytes(d);
  for (uint64_t i = 0; i < n; ++i) {
    // Rewrite the exponent field through the dtype's bit positions.
    const uint32_t e = three.entries[base[i * bytes] % 3];
    if (d == Dtype::bf16) {
      uint16_t v; std::memcpy(&v, &in[2 * i], 2);
      v = Bf16Traits::join(e, Bf16Traits::residual(v)); std::memcpy(&in[2 * i], &v, 2);
    } else if (d == Dtype::fp16) {
      uint16_t v; std::memcpy(&v, &in[2 * i], 2);
      v = Fp16Traits::join(e, Fp16Traits::residual(v)); std::memcpy(&in[2 * i], &v, 2);
    } else if (d == Dtype::fp32) {
      uint32_t v; std::memcpy(&v, &in[4 * i], 4);
      v = Fp32Traits::join(e, Fp32Traits::residual(v)); std::memcpy(&in[4 * i], &v, 4);
    } else {
      in[i] = Fp8E5M2Traits::join(e, Fp8E5M2Traits::residual(in[i]));
    }
  }
  const auto frame = round_trip(d, in, n);
  FrameInfo info;
  ASSERT_EQ(frame_info(frame.data(), frame.size(), &info), Status::ok);
  EXPECT_FALSE(info.stored);
  EXPECT_EQ(info.codebook.count, 3);
  EXPECT_EQ(info.escape_count, 0u);
  // A one-entry codebook: everything but one exponent escapes.
  Codebook one = three;
  one.count = 1;
  one.entries[1] = one.entries[2] = 0;
  CompressOptions o;
  o.codebook = &one;
  round_trip(d, in, n, o);
}

TEST_P(RoundTrip, StoredFallbackLayout) {
  const Dtype d = GetParam();
  const uint64_t n = 1001;
  const auto in = synth::generate(Generator::random_bits, d, n, 11);
  CompressOptions nock;
  nock.checksum = false;
  const auto frame = round_trip(d, in, n, nock);
  ASSERT_EQ(frame.size(), 64 + align16(n * dtype_bytes(d)));
  EXPECT_EQ(frame[6] & kFlagStored, kFlagStored);
  EXPECT_EQ(std::memcmp(frame.data() + 64, in.data(), in.size()), 0);
  for (uint64_t i = 64 + in.size(); i < frame.size(); ++i) EXPECT_EQ(frame[i], 0);
  for (int i = 32; i < 49; ++i) EXPECT_EQ(frame[i], 0);  // codebook and count zero
}

TEST_P(RoundTrip, ChecksumFlag) {
  const Dtype d = GetParam();
  for (Generator g : {Generator::gaussian_kv, Generator::random_bits}) {
    for (uint64_t n : {0ull, 1ull, 4099ull}) {
      const auto in = synth::generate(g, d, n, 21);
      CompressOptions o;
      o.checksum = true;
      round_trip(d, in, n, o);
    }
  }
}

TEST_P(RoundTrip, MidBufferExponentShiftWithStaleCodebook) {
  // A codebook calibrated on the first half escapes most of the second half.
  const Dtype d = GetParam();
  const uint64_t n = 40000;
  const auto in = synth::generate(Generator::exponent_shift, d, n, 4);
  Histogram h(d);
  h.add(in.data(), n / 2);
  const Codebook cb = h.codebook();
  CompressOptions o;
  o.codebook = &cb;
  round_trip(d, in, n, o);
  round_trip(d, in, n);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, RoundTrip, ::testing::ValuesIn(kDtypes),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

TEST(FrameStream, ConcatenatedFramesOfMixedDtypes) {
  std::vector<uint8_t> stream, expected;
  uint64_t k = 0;
  for (Dtype d : kDtypes) {
    for (Generator g : {Generator::gaussian_kv, Generator::random_bits}) {
      const uint64_t n = 777 + 100 * k++;
      const auto in = synth::generate(g, d, n, k);
      std::vector<uint8_t> f(compress_bound(d, n));
      CompressOptions o;
      o.checksum = (k % 2) == 0;
      const Result r = compress(d, in.data(), n, f.data(), f.size(), o);
      ASSERT_TRUE(r.ok());
      stream.insert(stream.end(), f.begin(), f.begin() + static_cast<long>(r.size));
      expected.insert(expected.end(), in.begin(), in.end());
    }
  }
  // An empty frame in the middle decodes to nothing.
  std::vector<uint8_t> empty(64);
  ASSERT_TRUE(compress(Dtype::bf16, nullptr, 0, empty.data(), empty.size()).ok());
  stream.insert(stream.begin() + 0, empty.begin(), empty.end());
  std::vector<uint8_t> out(expected.size());
  const Result r = decompress_frames(stream.data(), stream.size(), out.data(), out.size());
  ASSERT_EQ(r.status, Status::ok) << status_name(r.status);
  EXPECT_EQ(r.size, expected.size());
  EXPECT_TRUE(test::bytes_equal(out, expected));
  // decompress() reads only the first frame.
  const Result one = decompress(stream.data(), stream.size(), out.data(), out.size());
  EXPECT_EQ(one.status, Status::ok);
  EXPECT_EQ(one.size, 0u);
  // Trailing bytes that are not a whole frame.
  stream.push_back(0);
  EXPECT_EQ(decompress_frames(stream.data(), stream.size(), out.data(), out.size()).status, Status::truncated);
  stream.pop_back();
  // Too little room for all frames.
  EXPECT_EQ(decompress_frames(stream.data(), stream.size(), out.data(), out.size() - 1).status,
            Status::dst_too_small);
  // Output limit covers the whole stream.
  DecompressOptions lim;
  lim.max_output_bytes = expected.size() - 1;
  EXPECT_EQ(decompress_frames(stream.data(), stream.size(), out.data(), out.size(), lim).status,
            Status::limit_exceeded);
  lim.max_output_bytes = expected.size();
  EXPECT_EQ(decompress_frames(stream.data(), stream.size(), out.data(), out.size(), lim).status, Status::ok);
  // Zero frames.
  const Result none = decompress_frames(nullptr, 0, nullptr, 0);
  EXPECT_EQ(none.status, Status::ok);
  EXPECT_EQ(none.size, 0u);
}

}  // namespace
}  // namespace splitzip
