// SPDX-License-Identifier: Apache-2.0
// The Kokkos backend's whole-frame calls (compress_frame / decompress_frame)
// against the reference oracle: identical frame bytes (and identical
// untouched bytes past the frame) for every dtype, size, chunk size,
// checksum setting and codebook; capacity limits; cross-decode both ways;
// v2 block checks and the first corrupt block; v1 frames; and the frame
// code called with an explicit execution space instance.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <string>
#include <vector>

#include "backends/kokkos/kokkos_frame.h"
#include "backends/kokkos/kokkos_runtime.h"
#include "core/frame_rules.h"
#include "core/header.h"
#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/compare.h"
#include "tests/support/golden_cases.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

using synth::Generator;

class KokkosCodec : public ::testing::TestWithParam<Dtype> {
 protected:
  void SetUp() override { ASSERT_TRUE(kokkos_runs_host_buffers()); }
};

// Compresses with both, requires identical outcomes and, on success,
// identical buffers (frame and guard bytes; after an error the bytes written
// are undefined, FORMAT.md 1), then decodes the frame with both: same
// outcome, the input back, nothing written past it.
void check_identical(CompressArgs a, const std::string& what, uint64_t capacity = ~uint64_t{0}) {
  SCOPED_TRACE(what + " dtype=" + dtype_name(a.dtype) + " n=" + std::to_string(a.n) +
               " chunk_log2=" + std::to_string(a.chunk_log2) + " checksum=" + std::to_string(a.checksum) +
               " codebook=" + (a.codebook ? "given" : "dynamic"));
  const Compressed ref = run_compress(false, a, capacity);
  const Compressed kk = run_compress(true, a, capacity);
  ASSERT_TRUE(same_outcome(kk.outcome, ref.outcome))
      << "kokkos: " << describe(kk.outcome) << "; reference: " << describe(ref.outcome);
  if (ref.outcome.status != Status::ok) return;
  ASSERT_TRUE(bytes_equal(kk.buf, ref.buf));
  const uint64_t bytes = a.n * dtype_bytes(a.dtype);
  const std::vector<uint8_t> frame = kk.frame();
  ASSERT_TRUE(same_decode(frame, bytes));
  const Decompressed d = run_decompress(true, frame, bytes);
  ASSERT_EQ(d.outcome.status, Status::ok);
  EXPECT_TRUE(bytes_equal(d.out.data(), bytes, a.src, bytes));
}

TEST_P(KokkosCodec, EdgeSizesAllGenerators) {
  const Dtype d = GetParam();
  const Generator gens[] = {Generator::gaussian_kv, Generator::heavy_tail, Generator::all_escape,
                            Generator::random_bits, Generator::special_values, Generator::exponent_shift};
  const uint64_t sizes[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 1023, 1024, 1025, 3001};
  const Codebook body = synth::body_codebook(d);
  for (Generator g : gens)
    for (uint64_t n : sizes) {
      const auto src = synth::generate(g, d, n, 1000 + n);
      ASSERT_EQ(src.size(), n * dtype_bytes(d));
      for (bool checksum : {false, true}) {
        check_identical(compress_args(d, src.data(), n, nullptr, 6, checksum), synth::generator_name(g));
        check_identical(compress_args(d, src.data(), n, &body, 10, checksum), synth::generator_name(g));
      }
    }
}

TEST_P(KokkosCodec, ChunkBoundariesEveryChunkSize) {
  const Dtype d = GetParam();
  synth::Params p;
  p.escape_rate = 0.05;  // escapes in most chunks, including the short last one
  for (uint32_t log2 = kMinChunkLog2; log2 <= kMaxChunkLog2; ++log2) {
    const uint64_t chunk = uint64_t{1} << log2;
    for (uint64_t n : {chunk - 1, chunk, chunk + 1, 3 * chunk - 1, 3 * chunk + 1}) {
      const auto src = synth::generate(Generator::heavy_tail, d, n, 7 * n + log2, p);
      check_identical(compress_args(d, src.data(), n, nullptr, log2, (n & 1) != 0), "heavy_tail");
    }
  }
}

// Sizes around the 64 KiB checksum blocks: one byte-element short, exact,
// one over, and several blocks with a short last one.
TEST_P(KokkosCodec, ChecksumBlockEdges) {
  const Dtype d = GetParam();
  const uint64_t per_block = kChecksumBlockBytes / dtype_bytes(d);
  for (uint64_t n : {per_block - 1, per_block, per_block + 1, 2 * per_block, 3 * per_block + 7}) {
    const auto src = synth::generate(Generator::gaussian_kv, d, n, n);
    check_identical(compress_args(d, src.data(), n, nullptr, kDefaultChunkLog2, true), "gaussian_kv");
    const auto noise = synth::generate(Generator::random_bits, d, n, n + 1);  // stored frames
    check_identical(compress_args(d, noise.data(), n, nullptr, 12, true), "random_bits");
  }
}

TEST_P(KokkosCodec, SmallCodebooksEscapeRich) {
  const Dtype d = GetParam();
  const uint64_t n = 20000;
  for (double rate : {0.05, 0.1, 0.3, 0.45, 0.6}) {
    synth::Params p;
    p.escape_rate = rate;
    const auto src = synth::generate(Generator::heavy_tail, d, n, 99, p);
    for (const uint8_t count : {uint8_t{1}, uint8_t{2}, uint8_t{5}, uint8_t{16}}) {
      Codebook cb = synth::body_codebook(d);
      for (uint32_t i = count; i < 16; ++i) cb.entries[i] = 0;
      cb.count = count;
      check_identical(compress_args(d, src.data(), n, &cb, 8, count == 5),
                      "heavy_tail " + std::to_string(rate) + " with " + std::to_string(count) + " entries");
    }
  }
}

TEST_P(KokkosCodec, RealData) {
  const Dtype d = GetParam();
  const auto inputs = real_inputs(d);
  ASSERT_FALSE(inputs.empty());
  for (const auto& in : inputs) {
    check_identical(compress_args(d, in.bytes.data(), in.n), in.name);
    check_identical(compress_args(d, in.bytes.data(), in.n, nullptr, 15, true), in.name + " checksum");
    // An odd-length slice: short last chunk, odd code count, partial 3-bit byte.
    check_identical(compress_args(d, in.bytes.data(), 4099, nullptr, 6, true), in.name + " [0,4099)");
  }
}

// Every capacity around the coded and stored sizes: the same status and
// bytes as the reference, and never a byte written past the capacity.
TEST_P(KokkosCodec, CapacityLimits) {
  const Dtype d = GetParam();
  const uint64_t n = 3000;
  synth::Params p;
  p.escape_rate = 0.02;
  const auto src = synth::generate(Generator::heavy_tail, d, n, 5, p);
  for (bool checksum : {false, true}) {
    const CompressArgs a = compress_args(d, src.data(), n, nullptr, 8, checksum);
    const Compressed full = run_compress(false, a);
    ASSERT_EQ(full.outcome.status, Status::ok);
    const uint64_t coded = full.outcome.frame_size;
    const uint64_t stored = compress_bound(d, n);
    ASSERT_LT(coded, stored);
    for (uint64_t cap : {uint64_t{0}, uint64_t{63}, uint64_t{64}, coded - 16, coded - 1, coded, coded + 1,
                         stored - 1, stored}) {
      const Compressed kk = run_compress(true, a, cap);
      for (uint64_t i = cap; i < kk.buf.size(); ++i)
        ASSERT_EQ(kk.buf[i], kFill) << "kokkos wrote past capacity " << cap << " at " << i;
      if (kk.outcome.status == Status::ok) {
        ASSERT_LE(kk.outcome.frame_size, cap);
      }
      // (A reference frame larger than the capacity is the core bug that
      // NeitherFormFitsAfterEscapes names; compare only where it holds.)
      const Compressed ref = run_compress(false, a, cap);
      if (ref.outcome.status == Status::ok && ref.outcome.frame_size > cap) continue;
      check_identical(a, "capacity " + std::to_string(cap), cap);
    }
  }
}

// The coded frame fits with no escapes but not with the input's escapes,
// and the stored frame does not fit either: DST_TOO_SMALL, nothing written
// past the capacity (FORMAT.md 4.4 leaves no frame that fits).
TEST_P(KokkosCodec, NeitherFormFitsAfterEscapes) {
  const Dtype d = GetParam();
  const uint64_t n = 4096;
  const Codebook body = synth::body_codebook(d);
  synth::Params p;
  p.codebook = &body;
  const auto src = synth::generate(Generator::all_escape, d, n, 3, p);
  CompressArgs a = compress_args(d, src.data(), n, &body, 10, false);
  const uint64_t cap = coded_layout(static_cast<uint32_t>(d), n, 10, 0).frame_size;
  ASSERT_LT(cap, compress_bound(d, n));
  const Compressed kk = run_compress(true, a, cap);
  EXPECT_EQ(kk.outcome.status, Status::dst_too_small);
  for (uint64_t i = cap; i < kk.buf.size(); ++i) ASSERT_EQ(kk.buf[i], kFill) << "wrote past capacity at " << i;
  const Compressed ref = run_compress(false, a, cap);
  EXPECT_EQ(ref.outcome.status, Status::dst_too_small)
      << "reference_compress: " << describe(ref.outcome) << " with capacity " << cap
      << " (core/reference_encode.cpp: stored fallback without a capacity check)";
}

// v2 block checks: a fault in block b's bytes is reported as block b by both
// decoders; a fault in a stored check names its block; verify off decodes.
TEST_P(KokkosCodec, FirstCorruptBlock) {
  const Dtype d = GetParam();
  const uint64_t n = 5 * kChecksumBlockBytes / dtype_bytes(d) + 3;
  const uint64_t bytes = n * dtype_bytes(d);
  for (Generator g : {Generator::random_bits, Generator::gaussian_kv}) {  // stored, coded
    const auto src = synth::generate(g, d, n, 17);
    const Compressed c = run_compress(true, compress_args(d, src.data(), n, nullptr, 10, true));
    ASSERT_EQ(c.outcome.status, Status::ok);
    const std::vector<uint8_t> frame = c.frame();
    FrameHeader h;
    ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
    ASSERT_EQ(h.version, 2);
    ASSERT_EQ(h.n_checks(), 6u);
    ASSERT_EQ(g == Generator::random_bits, h.stored());
    const uint64_t check_off = h.stored() ? stored_check_off(h.dtype, n) : layout_of(h).check_off;
    for (uint64_t b : {uint64_t{0}, uint64_t{2}, uint64_t{5}}) {
      std::vector<uint8_t> bad = frame;
      if (h.stored()) {
        bad[64 + b * kChecksumBlockBytes + 1] ^= 0x01;
      } else {
        // A residual byte of an element in block b (fp8 has only 3-bit parts).
        const uint64_t elem = b * kChecksumBlockBytes / dtype_bytes(d) + 1;
        const FrameLayout L = layout_of(h);
        if (L.res_size > 0) bad[L.res_off + elem * (L.res_size / n)] ^= 0x01;
        else bad[L.high_off + 3 * elem / 8] ^= 0x01;
      }
      const Decompressed k = run_decompress(true, bad, bytes);
      EXPECT_EQ(k.outcome.status, Status::checksum_mismatch);
      EXPECT_EQ(k.outcome.corrupt_block, b);
      EXPECT_TRUE(same_decode(bad, bytes));
      EXPECT_TRUE(same_decode(bad, bytes, false));
      const Decompressed off = run_decompress(true, bad, bytes, false);
      EXPECT_EQ(off.outcome.status, Status::ok);

      bad = frame;
      bad[check_off + 4 * b + 2] ^= 0x40;  // the stored check itself
      const Decompressed kc = run_decompress(true, bad, bytes);
      EXPECT_EQ(kc.outcome.status, Status::checksum_mismatch);
      EXPECT_EQ(kc.outcome.corrupt_block, b);
      EXPECT_TRUE(same_decode(bad, bytes));
    }
    // Every block check right, the header checksum wrong (header re-sealed).
    std::vector<uint8_t> bad = frame;
    h.content_checksum ^= 1;
    write_header(h, bad.data());
    const Decompressed k = run_decompress(true, bad, bytes);
    EXPECT_EQ(k.outcome.status, Status::checksum_mismatch);
    EXPECT_EQ(k.outcome.corrupt_block, kNoBlock);
    EXPECT_TRUE(same_decode(bad, bytes));
  }
}

// v1 frames (XXH64 header check and content checksum, no stream 7) still
// decode: the committed golden frames, and v1 frames with a flipped bit.
TEST(KokkosV1Frames, CommittedFramesDecodeLikeReference) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  std::string err;
  const auto cases = golden_cases(&err, kGoldenV1);
  ASSERT_FALSE(cases.empty()) << err;
  int v1 = 0, v1_checksum = 0;
  for (const auto& c : cases) {
    bool ok = false;
    const auto frame = read_file(golden_sz_path(c.name, kGoldenV1), &ok);
    if (!ok) continue;  // only some cases have a committed .sz
    SCOPED_TRACE(c.name);
    ASSERT_GE(frame.size(), 64u);
    if (frame[4] != 1) continue;
    ++v1;
    const uint64_t bytes = c.n * dtype_bytes(c.dtype);
    EXPECT_TRUE(same_decode(frame, bytes));
    const Decompressed k = run_decompress(true, frame, bytes);
    ASSERT_EQ(k.outcome.status, Status::ok);
    const auto input = golden_input(c);
    EXPECT_TRUE(bytes_equal(k.out.data(), bytes, input.data(), input.size()));
    FrameHeader h;
    ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
    if (h.has_checksum() && bytes > 0) {
      ++v1_checksum;
      std::vector<uint8_t> bad = frame;
      if (h.stored()) bad[64] ^= 0x01;
      else if (layout_of(h).res_size > 0) bad[layout_of(h).res_off] ^= 0x01;
      else bad[layout_of(h).high_off] ^= 0x01;
      const Decompressed kb = run_decompress(true, bad, bytes);
      EXPECT_EQ(kb.outcome.status, Status::checksum_mismatch);
      EXPECT_EQ(kb.outcome.corrupt_block, kNoBlock);  // v1 has no blocks
      EXPECT_TRUE(same_decode(bad, bytes));
    }
  }
  EXPECT_GT(v1, 0) << "no committed v1 frame found under " << golden_sz_path("", kGoldenV1);
  EXPECT_GT(v1_checksum, 0) << "no committed v1 frame with a checksum";
}

// The frame code takes the execution space instance first, as kokkos-kernels
// does; a host instance gives the reference bytes and decodes them.
TEST_P(KokkosCodec, ExplicitHostSpaceInstance) {
  const Dtype d = GetParam();
  ASSERT_TRUE(kokkos_impl::ensure_runtime());
  const Kokkos::DefaultHostExecutionSpace space;
  const uint64_t n = 100007;
  const auto src = synth::generate(Generator::gaussian_kv, d, n, 3);
  CompressArgs a = compress_args(d, src.data(), n, nullptr, 9, true);
  const Compressed ref = run_compress(false, a);
  ASSERT_EQ(ref.outcome.status, Status::ok);
  std::vector<uint8_t> buf(ref.buf.size(), kFill);
  a.dst = buf.data();
  a.capacity = buf.size() - kGuard;
  FrameOutcome o;
  {
    std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());
    o = kokkos_impl::compress_frame(space, a);
  }
  ASSERT_TRUE(same_outcome(o, ref.outcome)) << describe(o);
  EXPECT_TRUE(bytes_equal(buf, ref.buf));

  std::vector<uint8_t> out(n * dtype_bytes(d));
  DecompressArgs da;
  da.src = buf.data();
  da.src_size = o.frame_size;
  da.dst = out.data();
  da.capacity = out.size();
  {
    std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());
    o = kokkos_impl::decompress_frame(space, da);
  }
  EXPECT_EQ(o.status, Status::ok) << describe(o);
  EXPECT_EQ(o.decoded_size, out.size());
  EXPECT_TRUE(bytes_equal(out, src));
}

// Argument errors: the reference's status, before any byte is written.
TEST_P(KokkosCodec, RejectsBadArgumentsLikeReference) {
  const Dtype d = GetParam();
  const std::vector<uint8_t> src(64 * dtype_bytes(d), 0x3C);
  Codebook other = synth::body_codebook(d == Dtype::bf16 ? Dtype::fp32 : Dtype::bf16);
  Codebook broken = synth::body_codebook(d);
  broken.entries[1] = broken.entries[0];  // duplicate entry
  std::vector<CompressArgs> cases;
  cases.push_back(compress_args(d, nullptr, 64));
  cases.push_back(compress_args(static_cast<Dtype>(9), src.data(), 8));
  cases.push_back(compress_args(d, src.data(), 64, nullptr, kMinChunkLog2 - 1));
  cases.push_back(compress_args(d, src.data(), 64, nullptr, kMaxChunkLog2 + 1));
  cases.push_back(compress_args(d, src.data(), 64, &other));
  cases.push_back(compress_args(d, src.data(), 64, &broken));
  cases.push_back(compress_args(d, src.data(), kMaxElems + 1));
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const uint64_t cap = 4096;
    const Compressed k = run_compress(true, cases[i], cap);
    const Compressed r = run_compress(false, cases[i], cap);
    EXPECT_NE(k.outcome.status, Status::ok);
    EXPECT_TRUE(same_outcome(k.outcome, r.outcome)) << describe(k.outcome) << " vs " << describe(r.outcome);
    EXPECT_TRUE(bytes_equal(k.buf, std::vector<uint8_t>(k.buf.size(), kFill)));
  }
  CompressArgs no_dst = compress_args(d, src.data(), 64);
  no_dst.capacity = 4096;
  EXPECT_EQ(kokkos()->compress_frame(no_dst).status, Status::invalid_argument);

  DecompressArgs da;
  da.src = nullptr;
  da.src_size = 64;
  EXPECT_EQ(kokkos()->decompress_frame(da).status, Status::invalid_argument);
  const std::vector<uint8_t> empty;
  EXPECT_TRUE(same_decode(empty, 0));  // TRUNCATED (rule 1)
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, KokkosCodec, ::testing::ValuesIn(kAllDtypes),
                         [](const ::testing::TestParamInfo<Dtype>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace splitzip::test
