// SPDX-License-Identifier: Apache-2.0
// The CPU backend at the Backend interface: registration and dispatch,
// the escape budget and capacity, invalid jobs, the histogram, thread
// defaults, and the target hooks the other tests rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/registry.h"
#include "core/header.h"
#include "core/layout.h"
#include "core/reference.h"
#include "core/synthetic.h"
#include "hwy/targets.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/compare.h"

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

struct JobSetup {
  Dtype dtype;
  std::vector<uint8_t> input;
  uint64_t n;
  Codebook cb;
  uint64_t escapes;  // by the reference
  std::vector<uint8_t> ref_frame;
};

JobSetup setup(Dtype d, uint64_t n) {
  JobSetup s;
  s.dtype = d;
  s.n = n;
  synth::Params p;
  p.escape_rate = 0.02;
  s.input = synth::generate(synth::Generator::heavy_tail, d, n, 5, p);
  s.cb = cpu_test::body_prefix(d, 12);
  const uint32_t id = static_cast<uint32_t>(d);
  s.ref_frame.assign(coded_layout(id, n, 10, n).frame_size, 0);
  EncodeJob job{d, s.input.data(), n, 10, &s.cb, s.ref_frame.data(), s.ref_frame.size(), n, 1};
  EXPECT_EQ(reference_backend()->encode(job), Status::ok);
  s.escapes = job.escape_count;
  return s;
}

// Escape budget: E > max_escapes is escape_overflow for both backends, and
// nothing is written past the capacity; E == max_escapes fits exactly.
TEST_P(CpuJobs, EscapeBudgetAndCapacity) {
  for (Dtype d : kDtypes) {
    for (uint64_t n : {uint64_t{5000}, uint64_t{70001}}) {
      const JobSetup s = setup(d, n);
      ASSERT_GT(s.escapes, 10u);
      const uint32_t id = static_cast<uint32_t>(d);
      const uint64_t exact = coded_layout(id, n, 10, s.escapes).frame_size;
      for (int t : kThreads) {
        SCOPED_TRACE(::testing::Message() << dtype_name(d) << " n=" << n << " threads=" << t);
        // Budget one short: overflow, with a guard zone after the capacity.
        const uint64_t cap = coded_layout(id, n, 10, s.escapes - 1).frame_size;
        std::vector<uint8_t> buf(cap + 256, 0xAB);
        EncodeJob job{d, s.input.data(), n, 10, &s.cb, buf.data(), cap, s.escapes - 1, t};
        EXPECT_EQ(cpu_be()->encode(job), Status::escape_overflow);
        for (uint64_t i = cap; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xAB) << "wrote past capacity at " << i;
        EncodeJob rjob = job;
        std::vector<uint8_t> rbuf(cap, 0);
        rjob.frame = rbuf.data();
        EXPECT_EQ(reference_backend()->encode(rjob), Status::escape_overflow);
        // A tiny budget stops early, still overflow.
        job.max_escapes = 0;
        EXPECT_EQ(cpu_be()->encode(job), Status::escape_overflow);
        // Exact budget and capacity: ok, same stream bytes as the reference.
        std::vector<uint8_t> ok(exact + 256, 0xAB);
        EncodeJob good{d, s.input.data(), n, 10, &s.cb, ok.data(), exact, s.escapes, t};
        ASSERT_EQ(cpu_be()->encode(good), Status::ok);
        EXPECT_EQ(good.escape_count, s.escapes);
        for (uint64_t i = exact; i < ok.size(); ++i) ASSERT_EQ(ok[i], 0xAB) << "wrote past capacity at " << i;
        // Compare streams only (the gaps are the frame layer's).
        const FrameLayout L = coded_layout(id, n, 10, s.escapes);
        const uint64_t offs[6] = {L.res_off, L.high_off, L.code_off, L.count_off, L.pos_off, L.exp_off};
        const uint64_t sizes[6] = {L.res_size, L.high_size, L.code_size, L.count_size, L.pos_size, L.exp_size};
        for (int k = 0; k < 6; ++k)
          EXPECT_TRUE(test::bytes_equal(ok.data() + offs[k], sizes[k], s.ref_frame.data() + offs[k], sizes[k]))
              << "stream " << k + 1;
      }
    }
  }
}

TEST_P(CpuJobs, InvalidJobs) {
  const JobSetup s = setup(Dtype::bf16, 1000);
  std::vector<uint8_t> buf(s.ref_frame.size());
  EncodeJob job{Dtype::bf16, s.input.data(), s.n, 10, &s.cb, buf.data(), buf.size(), s.n, 1};
  EncodeJob j = job;
  j.codebook = nullptr;
  EXPECT_EQ(cpu_be()->encode(j), Status::invalid_argument);
  j = job;
  j.frame = nullptr;
  EXPECT_EQ(cpu_be()->encode(j), Status::invalid_argument);
  j = job;
  j.src = nullptr;
  EXPECT_EQ(cpu_be()->encode(j), Status::invalid_argument);
  j = job;
  j.dtype = static_cast<Dtype>(9);
  EXPECT_EQ(cpu_be()->encode(j), Status::invalid_argument);
  j = job;
  j.chunk_log2 = 16;
  EXPECT_EQ(cpu_be()->encode(j), Status::invalid_argument);
  // Capacity below the E = 0 frame: refused before writing (the frame
  // layer never asks for this; it stores instead).
  j = job;
  j.capacity = 64;
  EXPECT_EQ(cpu_be()->encode(j), Status::internal_error);
  DecodeJob dj{nullptr, buf.data(), buf.data(), 1};
  EXPECT_EQ(cpu_be()->decode(dj), Status::invalid_argument);
  uint64_t counts[256];
  EXPECT_EQ(cpu_be()->histogram(Dtype::bf16, nullptr, 10, counts, 1), Status::invalid_argument);
  EXPECT_EQ(cpu_be()->histogram(static_cast<Dtype>(0), s.input.data(), 10, counts, 1), Status::invalid_argument);
  EXPECT_EQ(cpu_be()->histogram(Dtype::bf16, s.input.data(), 10, nullptr, 1), Status::invalid_argument);
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
          ASSERT_EQ(cpu_be()->histogram(d, in.data(), n, got, t), Status::ok);
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
