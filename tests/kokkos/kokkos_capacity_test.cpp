// SPDX-License-Identifier: Apache-2.0
// The Kokkos backend's capacity mode (FORMAT.md 4.6) against the reference
// oracle and the CPU backend: identical frame bytes (and untouched bytes past
// them) for every dtype the mode supports, sizes around the 64K-element
// block, checksums, real KV data and the committed golden frames; the same
// outcome at tight capacities; the reference's status (and first corrupt
// block) on the golden error vectors and on corrupted blocks; cross decodes
// Kokkos <-> reference <-> cpu; and the kernels called with an explicit
// execution space instance.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "backends/kokkos/kokkos_frame.h"
#include "backends/kokkos/kokkos_runtime.h"
#include "core/capacity/format.h"
#include "core/header.h"
#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/capacity_golden.h"
#include "tests/support/compare.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

using synth::Generator;

CompressArgs cap_args(Dtype d, const std::vector<uint8_t>& src, bool checksum, int threads = 0) {
  CompressArgs a = compress_args(d, src.data(), src.size() / dtype_bytes(d), nullptr, kDefaultChunkLog2, checksum);
  a.mode = Mode::capacity;
  a.threads = threads;
  return a;
}

// Compresses with Kokkos and the reference at `capacity`: the same outcome
// and, on success, the same buffer (frame and guard bytes); then both
// decoders on the frame: same outcome, the input back. Returns the frame.
std::vector<uint8_t> check_identical(const CompressArgs& a, const std::string& what,
                                     uint64_t capacity = ~uint64_t{0}) {
  SCOPED_TRACE(what + " dtype=" + dtype_name(a.dtype) + " n=" + std::to_string(a.n) +
               " checksum=" + std::to_string(a.checksum) + " capacity=" +
               (capacity == ~uint64_t{0} ? std::string("bound") : std::to_string(capacity)));
  const Compressed ref = run_compress(false, a, capacity);
  const Compressed kk = run_compress(true, a, capacity);
  EXPECT_TRUE(same_outcome(kk.outcome, ref.outcome))
      << "kokkos: " << describe(kk.outcome) << "; reference: " << describe(ref.outcome);
  if (ref.outcome.status != Status::ok || kk.outcome.status != Status::ok) return {};
  EXPECT_TRUE(bytes_equal(kk.buf, ref.buf));
  const uint64_t bytes = a.n * dtype_bytes(a.dtype);
  const std::vector<uint8_t> frame = kk.frame();
  EXPECT_TRUE(same_decode(frame, bytes));
  const Decompressed d = run_decompress(true, frame, bytes);
  EXPECT_EQ(d.outcome.status, Status::ok);
  EXPECT_TRUE(bytes_equal(d.out.data(), bytes, a.src, bytes));
  return frame;
}

uint8_t mode_of(const std::vector<uint8_t>& frame) { return frame.size() >= 64 ? frame[49] : 0xFF; }

class KokkosCapacity : public ::testing::TestWithParam<Dtype> {
 protected:
  void SetUp() override { ASSERT_TRUE(kokkos_runs_host_buffers()); }
};

// n = 0 and 1, odd, below one block, one block exactly, one more, several
// blocks with a short last one; every generator (random bits end stored).
TEST_P(KokkosCapacity, SizesAndGenerators) {
  const Dtype d = GetParam();
  const Generator gens[] = {Generator::gaussian_kv, Generator::heavy_tail, Generator::all_escape,
                            Generator::random_bits, Generator::special_values, Generator::exponent_shift};
  const uint64_t sizes[] = {0, 1, 2, 31, 32, 33, 1001, 65535, 65536, 65537, 3 * 65536 + 5};
  int mode1 = 0;
  for (Generator g : gens)
    for (uint64_t n : sizes) {
      const auto src = synth::generate(g, d, n, 500 + n);
      const auto frame = check_identical(cap_args(d, src, (n & 1) != 0), synth::generator_name(g));
      mode1 += mode_of(frame) == kModeCapacity;
    }
  EXPECT_GT(mode1, 20);  // most of these frames are coded in mode 1, not stored
}

// Real KV values (data/kv), with and without block checks.
TEST_P(KokkosCapacity, RealData) {
  const Dtype d = GetParam();
  const auto inputs = real_inputs(d);
  ASSERT_FALSE(inputs.empty());
  for (const auto& in : inputs) {
    const auto frame = check_identical(cap_args(d, in.bytes, true), in.name);
    EXPECT_EQ(mode_of(frame), kModeCapacity) << in.name;
    CompressOptions o;
    o.mode = Mode::capacity;
    EXPECT_TRUE(matches_reference("kokkos", d, in.bytes.data(), in.n, o)) << in.name;
  }
}

// Capacity exactly the frame size, one byte less, and room for neither form.
TEST_P(KokkosCapacity, TightCapacities) {
  const Dtype d = GetParam();
  for (Generator g : {Generator::gaussian_kv, Generator::random_bits}) {
    const uint64_t n = 65536 + 999;
    const auto src = synth::generate(g, d, n, 77);
    for (bool checksum : {false, true}) {
      const auto frame = check_identical(cap_args(d, src, checksum), synth::generator_name(g));
      ASSERT_FALSE(frame.empty());
      for (uint64_t cap : {uint64_t{frame.size()}, uint64_t{frame.size() - 1}, uint64_t{frame.size() / 2},
                           uint64_t{64}, uint64_t{0}})
        check_identical(cap_args(d, src, checksum), synth::generator_name(g), cap);
    }
  }
}

// Code lengths that reach the 12-bit limit (Fibonacci counts), a block with
// one value (zero bits per element) between coded blocks, and every exponent
// value of the dtype in one block.
TEST_P(KokkosCapacity, CodeShapes) {
  const Dtype d = GetParam();
  const uint64_t bytes = dtype_bytes(d);
  const auto base = synth::generate(Generator::gaussian_kv, d, 3 * 65536, 3);
  std::vector<uint8_t> src = base;
  // Block 1: all elements equal (one exponent value).
  for (uint64_t i = 65536; i < 2 * 65536; ++i)
    for (uint64_t k = 0; k < bytes; ++k) src[i * bytes + k] = base[65536 * bytes + k];
  check_identical(cap_args(d, src, true), "one-value block");
  // Block 0: exponent counts 1, 1, 2, 3, 5, ... (lengths capped at 12). The
  // exponent sits in the top bits below the sign; build values by dtype.
  const uint32_t exp_bits = d == Dtype::fp32 || d == Dtype::bf16 ? 8u : 5u;
  const uint32_t man_bits = 8u * static_cast<uint32_t>(bytes) - 1u - exp_bits;
  uint64_t i = 0;
  uint64_t f0 = 1, f1 = 1;
  for (uint32_t e = 0; e < (1u << exp_bits) && i < 65536; ++e) {
    for (uint64_t k = 0; k < f0 && i < 65536; ++k, ++i) {
      const uint64_t v = (uint64_t{e} << man_bits) | (i & ((uint64_t{1} << man_bits) - 1));
      for (uint64_t b = 0; b < bytes; ++b) src[i * bytes + b] = static_cast<uint8_t>(v >> (8 * b));
    }
    const uint64_t f2 = f0 + f1;
    f0 = f1;
    f1 = f2;
  }
  const auto frame = check_identical(cap_args(d, src, false), "fibonacci counts");
  ASSERT_EQ(mode_of(frame), kModeCapacity);
  FrameHeader h;
  ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
  CapTable t;
  ASSERT_EQ(parse_cap_table(frame.data() + capacity_layout_of(h).blk_off, h.escape_count, cap_symbol_limit(h.dtype), &t),
            Status::ok);
  uint32_t longest = 0;
  for (uint32_t e = t.first; e <= t.last; ++e) longest = t.len[e] > longest ? t.len[e] : longest;
  EXPECT_EQ(longest, kCapMaxLen);  // the limit is reached
  // Every exponent value in one short block.
  std::vector<uint8_t> all((1u << exp_bits) * 3 * bytes);
  for (uint64_t j = 0; j < all.size() / bytes; ++j) {
    const uint64_t v = (uint64_t{j % (1u << exp_bits)} << man_bits) | (j % 3);
    for (uint64_t b = 0; b < bytes; ++b) all[j * bytes + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  check_identical(cap_args(d, all, true), "every exponent value");
}

// The thread count option does not change the bytes.
TEST_P(KokkosCapacity, ThreadCounts) {
  const Dtype d = GetParam();
  const auto src = synth::generate(Generator::gaussian_kv, d, 2 * 65536 + 3, 8);
  for (int t : {1, 2, 3, 8}) check_identical(cap_args(d, src, true, t), "threads " + std::to_string(t));
}

// Every dtype has mode 1 (fp8_e4m3 from v3, FORMAT.md 4.6.7).
constexpr Dtype kCapDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3};
INSTANTIATE_TEST_SUITE_P(CapacityDtypes, KokkosCapacity, ::testing::ValuesIn(kCapDtypes),
                         [](const ::testing::TestParamInfo<Dtype>& i) { return std::string(dtype_name(i.param)); });

// fp8_e4m3 in mode 1 (FORMAT.md 4.6.7, v3): the reference's bytes.
TEST(KokkosCapacityArgs, E4M3SameBytesAsReference) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  for (uint64_t n : {uint64_t{1000}, uint64_t{2 * 65536 + 77}}) {
    const auto src = synth::generate(Generator::gaussian_kv, Dtype::fp8_e4m3, n, 1);
    const auto f = check_identical(cap_args(Dtype::fp8_e4m3, src, n > 1000), "e4m3 n " + std::to_string(n));
    if (n > 1000) {
      EXPECT_EQ(f[4], 3);
      EXPECT_EQ(f[49], 1);
    }
  }
}

// Single bit flips anywhere in the block index and the exponent blocks, and
// in stream 2's last byte: the reference's status and corrupt block.
TEST(KokkosCapacityMalformed, CorruptedFramesSameOutcome) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  for (Dtype d : {Dtype::bf16, Dtype::fp8_e5m2, Dtype::fp8_e4m3}) {
    const auto src = synth::generate(Generator::gaussian_kv, d, 3 * 65536 + 77, 9);
    const auto f0 = check_identical(cap_args(d, src, true), "corruption base");
    FrameHeader h;
    ASSERT_EQ(parse_header(f0.data(), f0.size(), &h), Status::ok);
    const CapLayout L = capacity_layout_of(h);
    int refused = 0;
    for (uint64_t t = 0; t < 300; ++t) {
      auto f = f0;
      const uint64_t span = L.blk_off + L.blk_size - L.index_off;
      const uint64_t at = t < 8 && L.high_size > 0 ? L.high_off + L.high_size - 1
                                                   : L.index_off + synth::random_u64(t, 1) % span;
      f[at] ^= static_cast<uint8_t>(1u << (synth::random_u64(t, 2) % 8));
      const Decompressed k = run_decompress(true, f, src.size());
      ASSERT_TRUE(same_decode(f, src.size())) << "byte " << at;
      refused += k.outcome.status != Status::ok;
    }
    EXPECT_GT(refused, 100) << dtype_name(d);
  }
}

// Frames written by one of Kokkos / cpu / reference and read by the others.
TEST(KokkosCapacityCross, KokkosCpuReference) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  const Backend* cpu = find_backend("cpu");
  std::vector<const Backend*> others = {nullptr};  // nullptr: the reference
  if (cpu != nullptr && cpu->available()) others.push_back(cpu);
  for (Dtype d : kCapDtypes) {
    const auto src = synth::generate(Generator::heavy_tail, d, 2 * 65536 + 11, 12);
    const uint64_t bytes = src.size();
    std::vector<std::vector<uint8_t>> frames;
    for (const Backend* be : {kokkos(), cpu}) {
      if (be == nullptr) continue;
      CompressArgs a = cap_args(d, src, true);
      std::vector<uint8_t> f(compress_bound(d, a.n));
      a.dst = f.data();
      a.capacity = f.size();
      const FrameOutcome o = be->compress_frame(a);
      ASSERT_EQ(o.status, Status::ok) << be->name();
      f.resize(o.frame_size);
      ASSERT_EQ(mode_of(f), kModeCapacity);
      frames.push_back(f);
    }
    for (const auto& f : frames) EXPECT_TRUE(bytes_equal(f, frames[0])) << "kokkos and cpu frames differ";
    const std::vector<uint8_t> ref_frame = run_compress(false, cap_args(d, src, true)).frame();
    EXPECT_TRUE(bytes_equal(frames[0], ref_frame));
    for (const Backend* reader : others) {
      std::vector<uint8_t> out(bytes);
      DecompressArgs a;
      a.src = frames[0].data();  // Kokkos' frame
      a.src_size = frames[0].size();
      a.dst = out.data();
      a.capacity = bytes;
      const FrameOutcome o = reader == nullptr ? reference_decompress(a) : reader->decompress_frame(a);
      ASSERT_EQ(o.status, Status::ok) << (reader ? reader->name() : "reference");
      EXPECT_TRUE(bytes_equal(out, src));
    }
    for (const auto& f : {ref_frame, frames.back()}) {  // the reference's and the cpu's frames into Kokkos
      const Decompressed k = run_decompress(true, f, bytes);
      ASSERT_EQ(k.outcome.status, Status::ok);
      EXPECT_TRUE(bytes_equal(k.out.data(), bytes, src.data(), bytes));
    }
  }
}

// The public API with backend "kokkos" and a stream of mode-1 frames.
TEST(KokkosCapacityCross, PublicApiStream) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  std::vector<uint8_t> expected, stream;
  for (Dtype d : kAllDtypes) {
    const uint64_t n = 70000 + static_cast<uint64_t>(d);
    const auto src = synth::generate(Generator::gaussian_kv, d, n, 60 + static_cast<uint64_t>(d));
    expected.insert(expected.end(), src.begin(), src.end());
    std::vector<uint8_t> f(compress_bound(d, n)), g(f.size());
    CompressOptions o;
    o.mode = Mode::capacity;
    o.checksum = true;
    o.backend = "kokkos";
    const Result r = compress(d, src.data(), n, f.data(), f.size(), o);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_STREQ(r.backend, "kokkos");
    o.backend = "reference";
    const Result q = compress(d, src.data(), n, g.data(), g.size(), o);
    ASSERT_EQ(q.status, Status::ok);
    ASSERT_EQ(r.size, q.size);
    EXPECT_TRUE(bytes_equal(f.data(), r.size, g.data(), q.size));
    stream.insert(stream.end(), f.begin(), f.begin() + static_cast<long>(r.size));
  }
  std::vector<uint8_t> out(expected.size());
  DecompressOptions o;
  o.backend = "kokkos";
  const Result r = decompress_frames(stream.data(), stream.size(), out.data(), out.size(), o);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_STREQ(r.backend, "kokkos");
  EXPECT_TRUE(bytes_equal(out, expected));
}

// The frame code with an explicit execution space instance (the caller's
// stream on a device space).
TEST(KokkosCapacityKernels, ExplicitSpaceInstance) {
  ASSERT_TRUE(kokkos_runs_host_buffers());
  ASSERT_TRUE(kokkos_impl::ensure_runtime());
  const Dtype d = Dtype::fp16;
  const auto src = synth::generate(Generator::gaussian_kv, d, 65536 + 40, 5);
  CompressArgs a = cap_args(d, src, true);
  std::vector<uint8_t> f(compress_bound(d, a.n));
  a.dst = f.data();
  a.capacity = f.size();
  std::lock_guard<std::mutex> lock(kokkos_impl::launch_mutex());  // launches are serialized
  const Kokkos::DefaultExecutionSpace space;
  const FrameOutcome o = kokkos_impl::compress_frame(space, a);
  ASSERT_EQ(o.status, Status::ok);
  f.resize(o.frame_size);
  EXPECT_TRUE(bytes_equal(f, run_compress(false, cap_args(d, src, true)).frame()));
  std::vector<uint8_t> out(src.size());
  DecompressArgs da;
  da.src = f.data();
  da.src_size = f.size();
  da.dst = out.data();
  da.capacity = out.size();
  da.verify_checksum = true;
  ASSERT_EQ(kokkos_impl::decompress_frame(space, da).status, Status::ok);
  EXPECT_TRUE(bytes_equal(out, src));
}

}  // namespace
}  // namespace splitzip::test
