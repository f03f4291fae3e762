// SPDX-License-Identifier: Apache-2.0
// fp8_e4m3 (FORMAT.md 4.7) on the cpu backend, every runnable Highway target
// forced in turn: the SIMD group kernels (cpu/e4m3-inl.h) against the format
// core's scalar group kernels (core/fp8_e4m3.h) on ranges with any start and
// length, and whole frames against the reference (edge sizes, threads,
// checksum, every byte value, real KV cast to E4M3, corrupt frames).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/fp8_e4m3.h"
#include "cpu/cpu_targets.h"
#include "cpu/kernels.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/e4m3_data.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

constexpr Dtype kE4M3 = Dtype::fp8_e4m3;

class CpuE4M3 : public cpu_test::PerTarget {};

Codebook top7(const std::vector<uint8_t>& v, uint32_t count = 7) {
  Histogram h(kE4M3);
  h.add(v.data(), v.size());
  Codebook cb = h.codebook();
  if (cb.count > count) cb.count = static_cast<uint8_t>(count);
  for (uint32_t i = cb.count; i < 16; ++i) cb.entries[i] = 0;
  return cb;
}

// The kernels on groups [g0, g0 + gn) equal the scalar group loops: streams,
// escapes, marker counts, rule 17/18 flags and decoded bytes.
void GroupKernelsEqualTheFormatCore() {
  for (uint32_t far : {0u, 5u, 40u, 100u}) {
    for (uint64_t n : {uint64_t{1}, uint64_t{8}, uint64_t{63}, uint64_t{64}, uint64_t{65}, uint64_t{1000},
                       uint64_t{4099}}) {
      const auto src = test::e4m3_kv_bytes(n, n + far, far);
      const Codebook cb = top7(src, 1 + static_cast<uint32_t>(n % 7));
      uint8_t code_of[16];
      e4m3_code_table(cb.entries, cb.count, code_of);
      const uint64_t groups = (n + 7) / 8;
      for (uint64_t g0 : {uint64_t{0}, uint64_t{1}, uint64_t{3}}) {
        if (g0 >= groups) continue;
        const uint64_t gn = groups - g0 - (g0 == 3 && groups > 5 ? 1 : 0);
        SCOPED_TRACE(::testing::Message() << "n=" << n << " far=" << far << " g0=" << g0 << " gn=" << gn);
        std::vector<uint8_t> res_a(4 * groups + 8, 0xEE), code_a(3 * groups + 8, 0xEE), esc_a(n + 72, 0xEE);
        auto res_b = res_a, code_b = code_a, esc_b = esc_a;
        uint64_t kb = 0, cnt = 0;
        for (uint64_t g = g0; g < g0 + gn; ++g) {
          cnt += e4m3_group_escapes(src.data(), n, g, code_of);
          kb += e4m3_encode_group(src.data(), n, g, code_of, res_b.data(), code_b.data(), esc_b.data() + kb);
        }
        EXPECT_EQ(cpu::e4m3_count_escapes(src.data(), n, g0, gn, code_of), cnt);
        const uint64_t ka = cpu::e4m3_encode_groups(src.data(), n, g0, gn, code_of, res_a.data(), false,
                                                    code_a.data(), esc_a.data());
        ASSERT_EQ(ka, kb);
        ASSERT_EQ(res_a, res_b);
        ASSERT_EQ(code_a, code_b);
        // Escapes: the first ka bytes (past them the kernel may write scratch).
        ASSERT_TRUE(std::equal(esc_a.begin(), esc_a.begin() + static_cast<std::ptrdiff_t>(ka), esc_b.begin()));
        // The histogram pass: exact counts, and stream 1 as the encoder writes it
        // (res_done then leaves it alone).
        uint64_t hist_a[16] = {}, hist_b[16] = {};
        for (uint64_t g = g0; g < g0 + gn; ++g)
          for (uint64_t i = 8 * g; i < std::min<uint64_t>(n, 8 * g + 8); ++i) ++hist_b[Fp8E4M3Traits::exponent(src[i])];
        std::vector<uint8_t> res_h(res_a.size(), 0xEE), code_h(code_a.size(), 0xEE), esc_h(esc_a.size());
        const bool wrote = cpu::e4m3_histogram_residual(src.data(), n, g0, gn, res_h.data(), hist_a);
        for (int b = 0; b < 16; ++b) ASSERT_EQ(hist_a[b], hist_b[b]) << b;
        ASSERT_EQ(cpu::e4m3_encode_groups(src.data(), n, g0, gn, code_of, res_h.data(), wrote, code_h.data(),
                                          esc_h.data()),
                  kb);
        ASSERT_EQ(res_h, res_b);
        ASSERT_EQ(code_h, code_b);
        // Decode: escapes as stream-6 nibbles.
        std::vector<uint8_t> nib((kb + 1) / 2 + 1, 0);
        for (uint64_t i = 0; i < kb; ++i) nib[i / 2] |= static_cast<uint8_t>(esc_b[i] << (4 * (i & 1)));
        bool bad_a = false, bad_b = false;
        uint64_t mb = 0;
        for (uint64_t g = g0; g < g0 + gn; ++g) mb += e4m3_group_markers(code_b.data(), n, g, cb.count, &bad_b);
        EXPECT_EQ(cpu::e4m3_count_markers(code_b.data(), n, g0, gn, cb.count, &bad_a), mb);
        EXPECT_EQ(bad_a, bad_b);
        EXPECT_FALSE(bad_a);
        std::vector<uint8_t> out(n + 8, 0xEE), escb(kb + cpu::kE4M3EscbSlack);
        EXPECT_FALSE(cpu::e4m3_expand_escapes(nib.data(), 0, kb, code_of, escb.data()));
        for (uint64_t i = 0; i < kb; ++i) ASSERT_EQ(escb[i], esc_b[i]) << i;
        bool bc = false;
        EXPECT_EQ(cpu::e4m3_decode_groups(res_b.data(), code_b.data(), nib.data(), escb.data(), n, g0, gn, cb.entries,
                                          code_of, cb.count, 0, kb, out.data(), &bc),
                  kb);
        EXPECT_FALSE(bc);
        const uint64_t last = std::min<uint64_t>(n, 8 * (g0 + gn));
        for (uint64_t i = 8 * g0; i < last; ++i) ASSERT_EQ(out[i], src[i]) << i;
        // One escape fewer than the markers (rule 15): the decoder stops.
        if (kb > 0)
          EXPECT_EQ(cpu::e4m3_decode_groups(res_b.data(), code_b.data(), nib.data(), escb.data(), n, g0, gn,
                                            cb.entries, code_of, cb.count, 0, kb - 1, out.data(), &bc),
                    cpu::kE4M3Overrun);
        // An odd first escape (a range starting mid-byte of stream 6).
        if (kb > 1) {
          EXPECT_FALSE(cpu::e4m3_expand_escapes(nib.data(), 1, kb - 1, code_of, escb.data()));
          for (uint64_t i = 1; i < kb; ++i) ASSERT_EQ(escb[i - 1], esc_b[i]) << i;
        }
        // Corrupt codes (rule 18) and an escape exponent in the codebook (rule 17).
        if (cb.count < 7) {
          auto bad_codes = code_b;
          for (uint64_t g = g0; g < g0 + gn; ++g) {  // code cb.count at the group's first element
            bad_codes[3 * g] = static_cast<uint8_t>((bad_codes[3 * g] & ~7u) | cb.count);
            bool x = false, y = false;
            e4m3_group_markers(bad_codes.data(), n, g, cb.count, &y);
            cpu::e4m3_count_markers(bad_codes.data(), n, g0, gn, cb.count, &x);
            ASSERT_TRUE(y);
            ASSERT_TRUE(x);
            bool z = false;
            cpu::e4m3_decode_groups(res_b.data(), bad_codes.data(), nib.data(), escb.data(), n, g0, gn, cb.entries,
                                    code_of, cb.count, 0, kb, out.data(), &z);
            ASSERT_TRUE(z);
            bad_codes[3 * g] = code_b[3 * g];
          }
        }
        if (kb > 0) {
          auto bad_nib = nib;
          bad_nib[(kb - 1) / 2] = static_cast<uint8_t>(cb.entries[0] * 0x11);
          EXPECT_TRUE(cpu::e4m3_expand_escapes(bad_nib.data(), 0, kb, code_of, escb.data()));
        }
      }
    }
  }
}

void FramesEqualReferenceEdgeSizesThreadsChecksum() {
  const auto kv = test::e4m3_kv_bytes(70000, 3);
  for (uint64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1023, 4097, 65535,
                     65536, 65537, 70000, 1024, 32768, 66560}) {
    for (int t : cpu_test::kThreads) {
      CompressOptions o;
      o.threads = t;
      o.checksum = (n + t) % 2 == 1;
      EXPECT_TRUE(test::matches_reference("cpu", kE4M3, kv.data(), n, o)) << "n=" << n << " threads=" << t;
      const Codebook cb3 = top7(kv, 3);
      o.codebook = &cb3;
      EXPECT_TRUE(test::matches_reference("cpu", kE4M3, kv.data(), n, o)) << "cb3 n=" << n << " threads=" << t;
    }
  }
}

void EveryByteValueRealKvAndCorruptFrames() {
  std::vector<uint8_t> mixed = test::e4m3_kv_bytes(20000, 5);
  for (int b = 0; b < 256; ++b) mixed.insert(mixed.begin() + 333 + 7 * b, static_cast<uint8_t>(b));
  for (bool checksum : {false, true}) {
    CompressOptions o;
    o.checksum = checksum;
    EXPECT_TRUE(test::matches_reference("cpu", kE4M3, mixed.data(), mixed.size(), o));
  }
  for (const test::RealInput& in : test::real_inputs(Dtype::fp32)) {
    std::vector<float> f(in.n);
    std::memcpy(f.data(), in.bytes.data(), in.n * 4);
    const auto v = test::e4m3_scaled(f.data(), in.n);
    CompressOptions o;
    o.threads = 2;
    EXPECT_TRUE(test::matches_reference("cpu", kE4M3, v.data(), v.size(), o)) << in.name;
  }
  const auto small = test::e4m3_kv_bytes(777, 9, 8);
  Codebook cb = top7(small, 5);
  std::vector<uint8_t> frame(compress_bound(kE4M3, small.size()));
  CompressOptions ro;
  ro.backend = "reference";
  ro.codebook = &cb;
  const Result r = compress(kE4M3, small.data(), small.size(), frame.data(), frame.size(), ro);
  ASSERT_EQ(r.status, Status::ok);
  frame.resize(r.size);
  for (uint64_t pos = 0; pos < frame.size(); ++pos)
    for (uint32_t bit : {0u, 3u, 6u}) {
      auto bad = frame;
      bad[pos] ^= static_cast<uint8_t>(1u << bit);
      ASSERT_TRUE(test::same_decode_result("cpu", bad.data(), bad.size(), small.size())) << pos << " bit " << bit;
    }
}

// Each test with the AVX3 target's VBMI2 loops on (where the CPU has them)
// and off (the plain AVX3 loops); other targets run the same loops twice.
template <class F>
void both_avx3_loops(F f) {
  for (bool vbmi2 : {true, false}) {
    SCOPED_TRACE(vbmi2 ? "vbmi2 on" : "vbmi2 off");
    cpu::set_e4m3_vbmi2(vbmi2);
    f();
  }
  cpu::set_e4m3_vbmi2(true);
}

TEST_P(CpuE4M3, GroupKernelsEqualTheFormatCore) { both_avx3_loops(GroupKernelsEqualTheFormatCore); }
TEST_P(CpuE4M3, FramesEqualReferenceEdgeSizesThreadsChecksum) {
  both_avx3_loops(FramesEqualReferenceEdgeSizesThreadsChecksum);
}
TEST_P(CpuE4M3, EveryByteValueRealKvAndCorruptFrames) { both_avx3_loops(EveryByteValueRealKvAndCorruptFrames); }

SPLITZIP_INSTANTIATE_PER_TARGET(CpuE4M3);

}  // namespace
}  // namespace splitzip
