// SPDX-License-Identifier: Apache-2.0
// The CPU backend at the Backend interface: registration and dispatch,
// the escape budget and capacity, invalid arguments, the histogram, thread
// defaults, unaligned buffers, and the target hooks the other tests rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/registry.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/layout.h"
#include "core/reference.h"
#include "cpu/parallel_codec.h"
#include "hwy/targets.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"

namespace splitzip {
namespace {

using cpu_test::kDtypes;
using cpu_test::kThreads;

const Backend* cpu_be() { return find_backend("cpu"); }

TEST(CpuBackend, RegisteredAvailableAndPickedForHostBuffers) {
  ASSERT_NE(cpu_be(), nullptr);
  EXPECT_STREQ(cpu_be()->name(), "cpu");
  EXPECT_TRUE(cpu_be()->available());
  EXPECT_TRUE(backend_available("cpu"));
  EXPECT_TRUE(cpu_be()->accepts(MemoryKind::host));
  EXPECT_FALSE(cpu_be()->accepts(MemoryKind::device));
  const Backend* b = nullptr;
  DispatchRequest req;
  req.memory = MemoryKind::host;
  req.bytes = 1 << 20;
  if (std::getenv("SPLITZIP_BACKEND") == nullptr) {
    ASSERT_EQ(select_backend(req, &b), Status::ok);
    EXPECT_STREQ(b->name(), "cpu");
    std::vector<uint16_t> x(1000, 0x3F80);
    std::vector<uint8_t> f(compress_bound(Dtype::bf16, x.size()));
    const Result r = compress(Dtype::bf16, x.data(), x.size(), f.data(), f.size());
    ASSERT_TRUE(r.ok());
    EXPECT_STREQ(r.backend, "cpu");
  }
}

TEST(CpuBackend, TargetHooks) {
  const auto runnable = cpu::runnable_targets();
  const auto compiled = cpu::compiled_targets();
  ASSERT_FALSE(runnable.empty());
  for (int64_t t : runnable) EXPECT_NE(std::find(compiled.begin(), compiled.end(), t), compiled.end());
  // The portable fallback is always compiled and runnable.
  const bool has_fallback = std::find(runnable.begin(), runnable.end(), HWY_SCALAR) != runnable.end() ||
                            std::find(runnable.begin(), runnable.end(), HWY_EMU128) != runnable.end();
  EXPECT_TRUE(has_fallback);
  // Unforced, dispatch takes the best runnable target.
  cpu::force_target(0);
  EXPECT_EQ(cpu::active_target(), runnable.front());
  for (int64_t t : runnable) {
    cpu::force_target(t);
    EXPECT_EQ(cpu::active_target(), t) << cpu::target_name(t);
  }
  cpu::force_target(0);
  EXPECT_EQ(cpu::active_target(), runnable.front());
}

class CpuJobs : public cpu_test::PerTarget {};

FrameOutcome cpu_compress(const CompressArgs& a) { return cpu_be()->compress_frame(a); }

CompressArgs args_for(Dtype d, const std::vector<uint8_t>& in, uint64_t n, uint8_t* dst, uint64_t cap,
                      const Codebook* cb, int threads, bool checksum) {
  CompressArgs a;
  a.dtype = d;
  a.src = in.data();
  a.n = n;
  a.dst = dst;
  a.capacity = cap;
  a.codebook = cb;
  a.chunk_log2 = 10;
  a.checksum = checksum;
  a.threads = threads;
  return a;
}

// Capacity at the escape budget's edges (FORMAT.md 4.4): the exact coded
// size is coded and byte-identical; one byte less must store, which does
// not fit either (dst_too_small). Nothing is written past the capacity.
TEST_P(CpuJobs, EscapeBudgetAndCapacity) {
  synth::Params p;
  p.escape_rate = 0.02;
  for (Dtype d : kDtypes) {
    const Codebook cb = cpu_test::body_prefix(d, 12);
    for (uint64_t n : {uint64_t{5000}, uint64_t{70001}}) {
      const auto in = synth::generate(synth::Generator::heavy_tail, d, n, 5, p);
      for (bool checksum : {false, true}) {
        std::vector<uint8_t> ref(compress_bound(d, n));
        const FrameOutcome r = reference_compress(args_for(d, in, n, ref.data(), ref.size(), &cb, 1, checksum));
        ASSERT_EQ(r.status, Status::ok);
        FrameHeader h;
        ASSERT_EQ(parse_header(ref.data(), r.frame_size, &h), Status::ok);
        if (h.stored()) continue;  // fp8 with 12 entries may store
        ASSERT_GT(h.escape_count, 10u);
        for (int t : kThreads) {
          SCOPED_TRACE(::testing::Message() << dtype_name(d) << " n=" << n << " threads=" << t
                                            << " checksum=" << checksum);
          std::vector<uint8_t> buf(r.frame_size + 256, 0xAB);
          FrameOutcome o = cpu_compress(args_for(d, in, n, buf.data(), r.frame_size, &cb, t, checksum));
          ASSERT_EQ(o.status, Status::ok);
          EXPECT_TRUE(test::bytes_equal(buf.data(), o.frame_size, ref.data(), r.frame_size));
          for (uint64_t i = r.frame_size; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB) << "past capacity at " << i;
          std::fill(buf.begin(), buf.end(), 0xAB);
          o = cpu_compress(args_for(d, in, n, buf.data(), r.frame_size - 1, &cb, t, checksum));
          EXPECT_EQ(o.status, Status::dst_too_small);
          for (uint64_t i = r.frame_size - 1; i < buf.size(); ++i)
            ASSERT_EQ(buf[i], 0xAB) << "past capacity at " << i;
        }
      }
    }
  }
}

// bf16 and fp16 with the checksum: the SIMD encode loop hashes whole 64 KiB
// blocks itself (XXH3 on its input vectors, FusedXxh3 in cpu/xxh3-inl.h), and the
// input's shorter last block when it is whole KiB (a 32 KiB page);
// libxxhash the rest. Frames equal the reference's (whose block hashes are
// libxxhash's XXH3_64bits): whole blocks, short last blocks of whole KiB
// (alone: 1 KiB, 32 KiB, 63 KiB; after whole blocks: 3 KiB) and not, one
// element past a block, the smallest and largest chunks, escapes, seeds.
TEST_P(CpuJobs, FusedBlockHashesMatchReference) {
  constexpr uint64_t kPer = kChecksumBlockBytes / 2;
  uint64_t seed = 40;
  for (const Dtype d : {Dtype::bf16, Dtype::fp16}) {
    const Codebook cb = cpu_test::body_prefix(d, 14);
    for (uint32_t log2 : {10u, kMaxChunkLog2}) {
      for (uint64_t n : {kPer, 4 * kPer, 4 * kPer + 1, 3 * kPer - 1, 5 * kPer + 4321, uint64_t{512}, kPer / 2,
                         kPer - 512, 3 * kPer + 1536}) {
        synth::Params p;
        p.escape_rate = 0.003;
        const auto in = synth::generate(synth::Generator::heavy_tail, d, n, ++seed, p);
        std::vector<uint8_t> ref(compress_bound(d, n));
        CompressArgs ra = args_for(d, in, n, ref.data(), ref.size(), &cb, 1, true);
        ra.chunk_log2 = log2;
        const FrameOutcome r = reference_compress(ra);
        ASSERT_EQ(r.status, Status::ok);
        FrameHeader h;
        ASSERT_EQ(parse_header(ref.data(), r.frame_size, &h), Status::ok);
        if (h.stored()) {  // only fp16's 1 KiB frame with 1 KiB chunks: its escapes cost more than they save
          ASSERT_TRUE(d == Dtype::fp16 && n == 512 && log2 == 10) << dtype_name(d) << " n=" << n;
          continue;
        }
        for (int t : kThreads) {
          std::vector<uint8_t> buf(ref.size());
          CompressArgs a = args_for(d, in, n, buf.data(), buf.size(), &cb, t, true);
          a.chunk_log2 = log2;
          const FrameOutcome o = cpu_compress(a);
          ASSERT_EQ(o.status, Status::ok);
          EXPECT_TRUE(test::bytes_equal(buf.data(), o.frame_size, ref.data(), r.frame_size))
              << dtype_name(d) << " n=" << n << " chunk_log2=" << log2 << " threads=" << t;
        }
      }
    }
  }
}

// bf16 decode + verify: the SIMD decode loop hashes whole 64 KiB blocks of
// its final output (escapes patched) itself (cpu/decode-inl.h with
// FusedXxh3) and the tap the rest. A flipped residual bit in block k (or in
// blocks k and k + 2) is CHECKSUM_MISMATCH naming block k, as from the
// reference; the intact frame verifies and decodes to the input.
TEST_P(CpuJobs, FusedDecodeHashesNameTheCorruptBlock) {
  const Dtype d = Dtype::bf16;
  const Codebook cb = cpu_test::body_prefix(d, 14);
  constexpr uint64_t kPer = kChecksumBlockBytes / 2;
  uint64_t seed = 60;
  for (uint32_t log2 : {10u, kMaxChunkLog2}) {
    for (uint64_t n : {4 * kPer, 5 * kPer + 4321}) {
      synth::Params p;
      p.escape_rate = 0.003;
      const auto in = synth::generate(synth::Generator::heavy_tail, d, n, ++seed, p);
      std::vector<uint8_t> frame(compress_bound(d, n));
      CompressArgs ra = args_for(d, in, n, frame.data(), frame.size(), &cb, 1, true);
      ra.chunk_log2 = log2;
      const FrameOutcome r = reference_compress(ra);
      ASSERT_EQ(r.status, Status::ok);
      frame.resize(r.frame_size);
      FrameHeader h;
      ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
      ASSERT_FALSE(h.stored());
      ASSERT_GT(h.escape_count, 0u);
      const uint64_t res_off = layout_of(h).res_off;
      const uint64_t bytes = 2 * n;
      const uint64_t blocks = (bytes + kChecksumBlockBytes - 1) / kChecksumBlockBytes;
      auto run = [&](const std::vector<uint8_t>& f, int t, std::vector<uint8_t>* out) {
        DecompressOptions o;
        o.backend = "cpu";
        o.threads = t;
        out->assign(bytes, 0);
        return decompress(f.data(), f.size(), out->data(), bytes, o);
      };
      std::vector<uint8_t> out;
      for (int t : kThreads) {
        const Result ok = run(frame, t, &out);
        EXPECT_TRUE(ok.ok()) << "n=" << n << " threads=" << t;
        EXPECT_EQ(ok.corrupt_block, kNoBlock);
        EXPECT_TRUE(test::bytes_equal(out.data(), bytes, reinterpret_cast<const uint8_t*>(in.data()), bytes));
      }
      for (uint64_t k = 0; k < blocks; ++k) {
        for (bool two : {false, true}) {
          std::vector<uint8_t> f = frame;
          const uint64_t i = std::min(n - 1, k * kPer + 1000 + 37 * k);
          f[res_off + i] ^= 0x01;
          if (two && k + 2 < blocks) f[res_off + (k + 2) * kPer + 5] ^= 0x10;
          DecompressOptions ro;
          ro.backend = "reference";
          std::vector<uint8_t> want(bytes);
          const Result w = decompress(f.data(), f.size(), want.data(), bytes, ro);
          ASSERT_EQ(w.status, Status::checksum_mismatch);
          ASSERT_EQ(w.corrupt_block, k);
          for (int t : kThreads) {
            const Result got = run(f, t, &out);
            EXPECT_EQ(got.status, Status::checksum_mismatch)
                << "n=" << n << " log2=" << log2 << " block " << k << " two=" << two << " threads=" << t;
            EXPECT_EQ(got.corrupt_block, k)
                << "n=" << n << " log2=" << log2 << " block " << k << " two=" << two << " threads=" << t;
          }
        }
      }
    }
  }
}

// Every element an escape: the coding pass overflows its budget (and stops
// early) and the frame is stored, exactly at the stored size's capacity.
TEST_P(CpuJobs, OverflowStoresAtExactCapacity) {
  for (Dtype d : kDtypes) {
    const Codebook cb = cpu_test::body_prefix(d, 4);
    synth::Params p;
    p.codebook = &cb;
    for (uint64_t n : {uint64_t{3000}, uint64_t{200001}}) {
      const auto in = synth::generate(synth::Generator::all_escape, d, n, 9, p);
      for (bool checksum : {false, true}) {
        const uint64_t checks = checksum ? checksum_blocks(n * dtype_bytes(d)) : 0;
        const uint64_t cap = stored_frame_size(static_cast<uint32_t>(d), n, checks);
        std::vector<uint8_t> ref(cap);
        const FrameOutcome r = reference_compress(args_for(d, in, n, ref.data(), cap, &cb, 1, checksum));
        ASSERT_EQ(r.status, Status::ok);
        ASSERT_EQ(r.frame_size, cap);
        for (int t : kThreads) {
          std::vector<uint8_t> buf(cap + 64, 0xAB);
          const FrameOutcome o = cpu_compress(args_for(d, in, n, buf.data(), cap, &cb, t, checksum));
          ASSERT_EQ(o.status, Status::ok);
          EXPECT_TRUE(test::bytes_equal(buf.data(), o.frame_size, ref.data(), r.frame_size))
              << dtype_name(d) << " n=" << n << " threads=" << t << " checksum=" << checksum;
          for (uint64_t i = cap; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB);
        }
      }
    }
  }
}

// Argument faults: the reference's status, before anything is written.
TEST_P(CpuJobs, InvalidArgumentsMatchReference) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 1000, 3);
  std::vector<uint8_t> buf(compress_bound(Dtype::bf16, 1000));
  const Codebook good = cpu_test::body_prefix(Dtype::bf16, 12);
  Codebook bad = good;
  bad.entries[1] = bad.entries[0];
  const Codebook other = cpu_test::body_prefix(Dtype::fp16, 12);
  const CompressArgs base = args_for(Dtype::bf16, in, 1000, buf.data(), buf.size(), nullptr, 2, true);
  std::vector<CompressArgs> cases;
  CompressArgs a = base;
  a.dst = nullptr;
  cases.push_back(a);
  a = base;
  a.src = nullptr;
  cases.push_back(a);
  a = base;
  a.dtype = static_cast<Dtype>(9);
  cases.push_back(a);
  a = base;
  a.chunk_log2 = 16;
  cases.push_back(a);
  a = base;
  a.chunk_log2 = 5;
  cases.push_back(a);
  a = base;
  a.codebook = &bad;
  cases.push_back(a);
  a = base;
  a.codebook = &other;
  cases.push_back(a);
  a = base;
  a.capacity = 64;  // neither form fits
  cases.push_back(a);
  for (size_t k = 0; k < cases.size(); ++k) {
    const Status want = reference_compress(cases[k]).status;
    EXPECT_NE(want, Status::ok) << "case " << k;
    EXPECT_EQ(cpu_compress(cases[k]).status, want) << "case " << k;
  }
  DecompressArgs d;
  d.src = nullptr;
  d.src_size = 10;
  EXPECT_EQ(cpu_be()->decompress_frame(d).status, reference_decompress(d).status);
  d.src = buf.data();
  d.src_size = 10;
  EXPECT_EQ(cpu_be()->decompress_frame(d).status, Status::truncated);
}

TEST_P(CpuJobs, HistogramMatchesScalarCounts) {
  const uint64_t sizes[] = {0, 1, 7, 31, 64, 100, 4095, 4097, 40000, 300001};
  for (Dtype d : kDtypes) {
    for (synth::Generator g : {synth::Generator::gaussian_kv, synth::Generator::random_bits,
                               synth::Generator::exponent_shift, synth::Generator::heavy_tail}) {
      for (uint64_t n : sizes) {
        const auto in = synth::generate(g, d, n, 3 + n);
        uint64_t want[256] = {};
        add_exponent_counts(d, in.data(), n, want);
        for (int t : kThreads) {
          uint64_t got[256];
          std::memset(got, 0xCD, sizeof got);
          cpu::exponent_histogram(d, in.data(), n, got, t);
          for (int b = 0; b < 256; ++b)
            ASSERT_EQ(got[b], want[b]) << dtype_name(d) << " " << synth::generator_name(g) << " n=" << n
                                       << " threads=" << t << " bin " << b;
        }
      }
    }
  }
}

// A buffer above the parallel threshold: the default thread count (all
// cores) and the override give the same frame as one thread.
TEST_P(CpuJobs, DefaultThreadsAboveThresholdMatchOneThread) {
  const Dtype d = Dtype::bf16;
  const uint64_t n = cpu::parallel_min_bytes() / 2 * 3 + 12345;
  const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 8);
  CompressOptions o;
  EXPECT_TRUE(test::matches_reference("cpu", d, in.data(), n, o));
  std::vector<uint8_t> a(compress_bound(d, n)), b(a.size());
  o.backend = "cpu";
  o.threads = 1;
  const Result ra = compress(d, in.data(), n, a.data(), a.size(), o);
  o.threads = 0;
  cpu::set_thread_override(5);
  const Result rb = compress(d, in.data(), n, b.data(), b.size(), o);
  cpu::set_thread_override(0);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_TRUE(test::bytes_equal(a.data(), ra.size, b.data(), rb.size));
}

// Input, frame and output at every alignment of their first 17 bytes, with
// and without streaming stores (which need 16-byte-aligned streams and
// fall back otherwise): same frame, same output.
TEST_P(CpuJobs, UnalignedBuffers) {
  synth::Params p;
  p.escape_rate = 0.01;
  for (Dtype d : kDtypes) {
    const uint64_t n = 20000 + 3;
    const uint64_t bytes = n * dtype_bytes(d);
    const auto in = synth::generate(synth::Generator::heavy_tail, d, n, 21, p);
    std::vector<uint8_t> want(compress_bound(d, n));
    CompressOptions ro;
    ro.backend = "reference";
    const Result rr = compress(d, in.data(), n, want.data(), want.size(), ro);
    ASSERT_TRUE(rr.ok());
    for (bool stream : {false, true}) {
      cpu::set_stream_min_bytes(stream ? 1 : 0);
      for (uint64_t off = 0; off < 17; ++off) {
        SCOPED_TRACE(::testing::Message() << dtype_name(d) << " offset " << off << " stream " << stream);
        std::vector<uint8_t> src(bytes + 17), frame(want.size() + 17), out(bytes + 17);
        std::memcpy(src.data() + off, in.data(), bytes);
        CompressOptions o;
        o.backend = "cpu";
        o.threads = 2;
        const Result r = compress(d, src.data() + off, n, frame.data() + off, want.size(), o);
        ASSERT_TRUE(r.ok());
        EXPECT_TRUE(test::bytes_equal(frame.data() + off, r.size, want.data(), rr.size));
        DecompressOptions dopt;
        dopt.backend = "cpu";
        dopt.threads = 2;
        const Result dr = decompress(frame.data() + off, r.size, out.data() + off, bytes, dopt);
        ASSERT_TRUE(dr.ok());
        EXPECT_TRUE(test::bytes_equal(out.data() + off, dr.size, in.data(), bytes));
      }
    }
    cpu::set_stream_min_bytes(0);
  }
}

SPLITZIP_INSTANTIATE_PER_TARGET(CpuJobs);

}  // namespace
}  // namespace splitzip
