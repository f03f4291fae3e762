// SPDX-License-Identifier: Apache-2.0
// The fast host capacity codec (cpu/capacity_codec.cpp) against the
// reference oracle: the same bytes at every thread count, the same statuses
// on the golden error vectors and on corrupted frames; every test on every
// runnable Highway target (the decoder's kernels, cpu/capacity-inl.h, and
// the encoder's split and histogram kernels are dispatched).
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/capacity/format.h"
#include "core/header.h"
#include "core/reference.h"
#include "cpu/capacity_codec.h"
#include "cpu/capacity_encode.h"
#include "cpu/cpu_targets.h"
#include "cpu/kernels.h"
#include "hwy/targets.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

std::vector<uint8_t> enc(Dtype d, const std::vector<uint8_t>& in, bool ck, int threads, bool fast) {
  CompressArgs a;
  a.dtype = d;
  a.n = in.size() / dtype_bytes(d);
  a.src = in.data();
  std::vector<uint8_t> out(compress_bound(d, a.n));
  a.dst = out.data();
  a.capacity = out.size();
  a.checksum = ck;
  a.threads = threads;
  a.mode = Mode::capacity;
  const FrameOutcome o = fast ? capacity_compress_frame(a) : reference_compress(a);
  EXPECT_EQ(o.status, Status::ok);
  out.resize(o.frame_size);
  return out;
}

FrameOutcome dec(const std::vector<uint8_t>& f, uint64_t cap, int threads, bool fast, std::vector<uint8_t>* out) {
  out->assign(cap, 0);
  DecompressArgs a;
  a.src = f.data();
  a.src_size = f.size();
  a.dst = out->data();
  a.capacity = cap;
  a.threads = threads;
  return fast ? capacity_decompress_frame(a) : reference_decompress(a);
}

class CapacityCpu : public cpu_test::PerTarget {};

TEST_P(CapacityCpu, SameBytesAsReference) {
  const uint64_t sizes[] = {0, 1, 33, 1000, 65536, 65537, 5 * 65536 + 3};
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3})
    for (uint64_t n : sizes)
      for (auto g : {synth::Generator::gaussian_kv, synth::Generator::special_values, synth::Generator::random_bits})
        for (bool ck : {false, true}) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " n=" + std::to_string(n) + " " + synth::generator_name(g));
          const auto in = synth::generate(g, d, n, n + 1, {});
          const auto ref = enc(d, in, ck, 1, false);
          for (int t : {1, 2, 3}) {
            ASSERT_EQ(enc(d, in, ck, t, true), ref) << "threads " << t;
            std::vector<uint8_t> out;
            const FrameOutcome o = dec(ref, in.size(), t, true, &out);
            ASSERT_EQ(o.status, Status::ok);
            ASSERT_EQ(out, in);
          }
        }
}

// A frame that ends up stored (random bits) or too big: nothing written past
// compress_bound even when the destination is larger (the coded blocks go
// into the frame only while they can belong to a coded frame).
TEST_P(CapacityCpu, NoWritePastBound) {
  for (Dtype d : {Dtype::bf16, Dtype::fp32})
    for (auto g : {synth::Generator::random_bits, synth::Generator::gaussian_kv})
      for (bool ck : {false, true}) {
        const uint64_t n = 3 * 65536 + 5;
        const auto in = synth::generate(g, d, n, 11, {});
        const uint64_t bound = compress_bound(d, n);
        std::vector<uint8_t> out(bound + 4096, 0xA5);
        CompressArgs a;
        a.dtype = d;
        a.n = n;
        a.src = in.data();
        a.dst = out.data();
        a.capacity = out.size();
        a.checksum = ck;
        a.threads = 2;
        a.mode = Mode::capacity;
        const FrameOutcome o = capacity_compress_frame(a);
        ASSERT_EQ(o.status, Status::ok);
        for (uint64_t i = bound; i < out.size(); ++i) ASSERT_EQ(out[i], 0xA5) << "byte " << i;
        out.resize(o.frame_size);
        EXPECT_EQ(out, enc(d, in, ck, 1, false));
      }
}

TEST_P(CapacityCpu, RealKv) {
  for (const auto& r : test::real_inputs(Dtype::bf16)) {
    const auto ref = enc(Dtype::bf16, r.bytes, true, 1, false);
    ASSERT_EQ(enc(Dtype::bf16, r.bytes, true, 2, true), ref) << r.name;
    for (int t : {1, 2}) {
      std::vector<uint8_t> out;
      ASSERT_EQ(dec(ref, r.bytes.size(), t, true, &out).status, Status::ok) << r.name;
      ASSERT_EQ(out, r.bytes) << r.name;
    }
  }
}

// The encoder's vector writers take a block's codes through one lookup
// window per 16 exponent values: blocks whose exponents span 1..256 values
// and that still code (most values share one exponent, so the frame is not
// stored), with block lengths that leave rows and elements for the scalar
// tail; the bf16 split with non-temporal residual stores forced on and off.
TEST_P(CapacityCpu, WideExponentSpans) {
  const uint64_t sizes[] = {65536, 2 * 65536 + 32 * 129 + 7, 4096 + 31};
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3})  // e4m3: the byte is the symbol
    for (uint32_t span : {1u, 2u, 16u, 17u, 40u, 129u, 256u})
      for (uint64_t n : sizes) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " span " + std::to_string(span) + " n=" + std::to_string(n));
        const uint32_t bytes = dtype_bytes(d);
        std::vector<uint8_t> in(n * bytes);
        for (uint64_t i = 0; i < n; ++i) {
          const uint64_t r = synth::random_u64(span * 7 + n, i);
          // 3 in 4 values share one exponent, the rest spread over the span
          // (fp16 keeps the low 5 bits).
          const uint32_t e = (r & 3) ? 120 % span : static_cast<uint32_t>((r >> 8) % span);
          const uint32_t man = static_cast<uint32_t>(r >> 32);
          uint32_t v;
          if (d == Dtype::bf16)
            v = (man & 0x807Fu) | (e << 7);
          else if (d == Dtype::fp16)
            v = (man & 0x83FFu) | ((e & 31u) << 10);
          else if (d == Dtype::fp8_e4m3)
            v = e;
          else if (d == Dtype::fp8_e5m2)
            v = (man & 0x83u) | ((e & 31u) << 2);
          else
            v = (man & 0x807FFFFFu) | (e << 23);
          std::memcpy(in.data() + i * bytes, &v, bytes);
        }
        const auto ref = enc(d, in, false, 1, false);
        ASSERT_EQ(ref[49], kModeCapacity);  // coded, not stored
        for (bool stream : {false, true}) {
          cpu::set_stream_min_bytes(stream ? 1 : 0);
          for (int t : {1, 2}) EXPECT_EQ(enc(d, in, false, t, true), ref) << "threads " << t << " stream " << stream;
          cpu::set_stream_min_bytes(0);
        }
      }
}

// The decoder's kernels against element-by-element loops: the transpose of
// stream-major rows, and the bf16 join with regular and non-temporal stores
// (aligned and not).
TEST_P(CapacityCpu, TransposeAndJoinKernels) {
  ASSERT_EQ(cpu::capacity_target(), GetParam());  // the capacity kernels follow the forced target
  constexpr size_t kStride = 2048 + 64;
  const uint32_t n16 = 2048;
  std::vector<uint8_t> rows(32 * kStride), res(65536);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<uint8_t>(synth::random_u64(i, 5));
  for (size_t i = 0; i < res.size(); ++i) res[i] = static_cast<uint8_t>(synth::random_u64(i, 6));
  std::vector<uint8_t> exps(65536), want_exps(65536);
  for (uint32_t j = 0; j < 65536; ++j) want_exps[j] = rows[(j % 32) * kStride + j / 32];
  cpu::cap_transpose(rows.data(), kStride, n16, exps.data());
  ASSERT_EQ(exps, want_exps);
  std::vector<uint8_t> want(2 * 65536);
  for (uint32_t j = 0; j < 65536; ++j) {
    const uint16_t v = static_cast<uint16_t>(((res[j] & 0x80u) << 8) | (uint32_t{want_exps[j]} << 7) | (res[j] & 0x7Fu));
    std::memcpy(&want[2 * j], &v, 2);
  }
  std::vector<uint8_t> buf(2 * 65536 + 128);
  const size_t align = (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  for (bool stream : {false, true})
    for (size_t off : {align, align + 1, align + 16, align + 48}) {  // 64-byte lines, unaligned, 16-byte aligned
      std::fill(buf.begin(), buf.end(), 0);
      cpu::cap_transpose_join_bf16(rows.data(), kStride, n16, res.data(), buf.data() + off, stream);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin() + off)) << "stream " << stream << " off " << off;
    }
  // Fewer tiles (AVX-512 joins 64 indices at a time, 16 for the rest):
  // nothing past them is written.
  for (uint32_t tiles : {16u, 80u})
    for (bool stream : {false, true}) {
      std::fill(buf.begin(), buf.end(), 0xA5);
      cpu::cap_transpose_join_bf16(rows.data(), kStride, tiles, res.data(), buf.data() + align, stream);
      const size_t bytes = 2 * 32 * size_t{tiles};
      ASSERT_TRUE(std::equal(want.begin(), want.begin() + bytes, buf.begin() + align)) << tiles;
      for (size_t i = align + bytes; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xA5) << i;
    }
}

// The bf16 join that hashes what it writes (FORMAT.md 4.5): the same
// values as the plain join, and on AVX2 (the target that fuses the hash)
// hashes[k] = block_hash of the output for each whole 64 KiB checksum block
// of the wide (32-index) part, none written past them; other targets hash
// nothing. With last (the output ends the frame), also the shorter checksum
// block past them when it is whole groups (64 indices, AVX2 32: a 32 KiB
// page is one). Full blocks (two checksum blocks), partial ones with one whole
// checksum block or none, rows of random bytes and of KV-like exponents
// (mostly one value), regular and non-temporal stores, aligned and not.
TEST_P(CapacityCpu, JoinHashedKernel) {
  ASSERT_EQ(cpu::capacity_target(), GetParam());
  constexpr size_t kStride = 2048 + 64;
  const bool fuses = GetParam() == HWY_AVX2 || GetParam() <= HWY_AVX3;  // the x86 joins that hash
  for (bool kv : {false, true}) {
    std::vector<uint8_t> rows(32 * kStride), res(65536);
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint64_t r = synth::random_u64(i + kv, 15);
      rows[i] = static_cast<uint8_t>(kv ? ((r & 3) ? 120 : 112 + r % 16) : r);
    }
    for (size_t i = 0; i < res.size(); ++i) res[i] = static_cast<uint8_t>(synth::random_u64(i + kv, 16));
    std::vector<uint8_t> buf(2 * 65536 + 128), want(2 * 65536 + 128);
    const size_t align = (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
    const uint32_t group = GetParam() == HWY_AVX2 ? 32 : 64;  // indices a fused group hashes
    for (uint32_t n16 : {2048u, 2032u, 1024u + 48u, 1024u + 256u, 1024u, 1008u, 512u, 64u, 16u})
      for (bool stream : {false, true})
        for (bool last : {false, true})
        for (size_t off : {align, align + 1, align + 16, align + 48}) {
          SCOPED_TRACE("kv " + std::to_string(kv) + " n16 " + std::to_string(n16) + " stream " +
                       std::to_string(stream) + " last " + std::to_string(last) + " off " + std::to_string(off));
          std::fill(want.begin(), want.end(), 0x5A);
          cpu::cap_transpose_join_bf16(rows.data(), kStride, n16, res.data(), want.data() + off, stream);
          std::fill(buf.begin(), buf.end(), 0x5A);
          uint64_t hashes[3] = {1, 2, 3};
          const uint32_t k =
              cpu::cap_transpose_join_bf16_hashed(rows.data(), kStride, n16, res.data(), buf.data() + off, stream, hashes,
                                                  last);
          ASSERT_EQ(buf, want);
          const uint64_t bytes = 64 * uint64_t{n16};
          const uint32_t rest = n16 % 1024;
          ASSERT_EQ(k, fuses ? n16 / 1024 + (last && rest != 0 && rest % group == 0 ? 1 : 0) : 0u);
          for (uint32_t b = 0; b < k; ++b) EXPECT_EQ(hashes[b], block_hash(buf.data() + off, bytes, b)) << b;
          for (uint32_t b = k; b < 3; ++b) EXPECT_EQ(hashes[b], b + 1) << b;
        }
  }
}

// Decoding with the checksum verified (the default) hashes bf16's checksum
// blocks in the join where it can and the rest afterwards: 1-3 blocks,
// partial last blocks with and without a whole checksum block in their wide
// part, last checksum blocks shorter than 64 KiB that the join hashes
// (a 32 KiB page, 8 KiB after a whole block), odd tails, regular and
// non-temporal stores, 1 and 2 threads.
TEST_P(CapacityCpu, ChecksumRoundTrip) {
  const uint64_t sizes[] = {7,         1000,          16384,     32768,         65536,        65536 + 4096,
                            65536 + 32768, 65536 + 32768 + 5, 2 * 65536, 2 * 65536 + 1, 3 * 65536, 3 * 65536 - 1,
                            2 * 65536 + 40000 + 17};
  for (uint64_t n : sizes) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, n + 7, {});
    const auto ref = enc(Dtype::bf16, in, true, 1, false);
    if (n >= 1000) ASSERT_EQ(ref[49], kModeCapacity) << n;  // coded, not stored
    for (bool stream : {false, true}) {
      cpu::set_stream_min_bytes(stream ? 1 : 0);
      for (int t : {1, 2}) {
        SCOPED_TRACE("n " + std::to_string(n) + " stream " + std::to_string(stream) + " threads " + std::to_string(t));
        std::vector<uint8_t> out;
        const FrameOutcome o = dec(ref, in.size(), t, true, &out);
        EXPECT_EQ(o.status, Status::ok);
        EXPECT_EQ(out, in);
      }
      cpu::set_stream_min_bytes(0);
    }
  }
}

// The hashes the join computes are checked: one residual byte changed (the
// block still decodes, to other values) gives CHECKSUM_MISMATCH naming its
// 64 KiB block, for elements in whole checksum blocks of full and partial
// capacity blocks (hashed in the join on AVX2), in the partial block's
// checksum block that the join does not finish (its 32-index part, its
// 16-index tiles, its element tail) and at the frame's first and last
// element.
TEST_P(CapacityCpu, CorruptResidualNamesBlock) {
  // Last block: 1266 indices + 13 elements = a whole checksum block, 224
  // indices of 32-index groups, a 16-index tile, 77 elements one by one.
  const uint64_t n = 3 * 65536 + 40512 + 13;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 21, {});
  const auto f0 = enc(Dtype::bf16, in, true, 1, false);
  FrameHeader h;
  ASSERT_EQ(parse_header(f0.data(), f0.size(), &h), Status::ok);
  ASSERT_EQ(h.mode, kModeCapacity);
  const CapLayout L = capacity_layout_of(h);
  const uint64_t last = 3 * 65536;
  const uint64_t elems[] = {0,           1000,        32767,       32768,         65536 + 40000,     2 * 65536 + 65535,
                            last + 100,  last + 32767, last + 32768 + 10, last + 39935,     last + 39936 + 5,
                            last + 40448 + 5, n - 1};
  for (bool stream : {false, true}) {
    cpu::set_stream_min_bytes(stream ? 1 : 0);
    for (uint64_t j : elems)
      for (int t : {1, 2}) {
        SCOPED_TRACE("element " + std::to_string(j) + " stream " + std::to_string(stream) + " threads " +
                     std::to_string(t));
        auto f = f0;
        f[L.res_off + j] ^= 0x41;
        std::vector<uint8_t> out;
        const FrameOutcome o = dec(f, in.size(), t, true, &out);
        EXPECT_EQ(o.status, Status::checksum_mismatch);
        EXPECT_EQ(o.corrupt_block, 2 * j / 65536);
      }
    cpu::set_stream_min_bytes(0);
  }
}

// The fp16 / fp32 joins against Traits::join element by element: counts
// that are not a multiple of any vector width, inputs that end exactly at
// the last element's bits (the vector loads must stop before high_end /
// res_end and leave the rest to the element loop), regular and
// non-temporal stores at several alignments, nothing written past count.
TEST_P(CapacityCpu, Fp16Fp32E5m2JoinKernels) {
  ASSERT_EQ(cpu::capacity_target(), GetParam());
  for (uint32_t count : {0u, 1u, 7u, 8u, 37u, 64u, 515u, 4096u, 4096u + 24u}) {
    std::vector<uint8_t> exps(count), exps16(count), res16(count), res32(3 * size_t{count});
    std::vector<uint8_t> high((3 * size_t{count} + 7) / 8);
    for (uint32_t i = 0; i < count; ++i) {
      exps[i] = static_cast<uint8_t>(synth::random_u64(i, 7));
      exps16[i] = exps[i] & 0x1F;  // fp16 exponents have 5 bits
      res16[i] = static_cast<uint8_t>(synth::random_u64(i, 8));
    }
    for (size_t i = 0; i < res32.size(); ++i) res32[i] = static_cast<uint8_t>(synth::random_u64(i, 9));
    for (size_t i = 0; i < high.size(); ++i) high[i] = static_cast<uint8_t>(synth::random_u64(i, 10));
    if (!high.empty() && (3 * count) % 8) high.back() &= static_cast<uint8_t>((1u << ((3 * count) % 8)) - 1);
    std::vector<uint8_t> want16(2 * size_t{count}), want32(4 * size_t{count}), want8(count);
    for (uint32_t i = 0; i < count; ++i) {
      const uint16_t v = Fp16Traits::join(exps16[i], res16[i] | load_bits3(high.data(), i) << 8);
      std::memcpy(&want16[2 * size_t{i}], &v, 2);
      want8[i] = Fp8E5M2Traits::join(exps16[i], load_bits3(high.data(), i));
      const uint8_t* q = &res32[3 * size_t{i}];
      const uint32_t w = Fp32Traits::join(exps[i], q[0] | uint32_t{q[1]} << 8 | uint32_t{q[2]} << 16);
      std::memcpy(&want32[4 * size_t{i}], &w, 4);
    }
    std::vector<uint8_t> buf(4 * size_t{count} + 192);
    const size_t align = (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
    for (bool stream : {false, true})
      for (size_t off : {align, align + 1, align + 16, align + 48}) {
        SCOPED_TRACE("count " + std::to_string(count) + " stream " + std::to_string(stream) + " off " +
                     std::to_string(off));
        std::fill(buf.begin(), buf.end(), 0xA5);
        cpu::cap_join_fp16(exps16.data(), count, res16.data(), high.data(), high.data() + high.size(),
                           buf.data() + off, stream);
        ASSERT_TRUE(std::equal(want16.begin(), want16.end(), buf.begin() + off));
        for (size_t i = off + want16.size(); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xA5) << i;
        std::fill(buf.begin(), buf.end(), 0xA5);
        cpu::cap_join_fp32(exps.data(), count, res32.data(), res32.data() + res32.size(), buf.data() + off, stream);
        ASSERT_TRUE(std::equal(want32.begin(), want32.end(), buf.begin() + off));
        for (size_t i = off + want32.size(); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xA5) << i;
        std::fill(buf.begin(), buf.end(), 0xA5);
        cpu::cap_join_e5m2(exps16.data(), count, high.data(), high.data() + high.size(), buf.data() + off, stream);
        ASSERT_TRUE(std::equal(want8.begin(), want8.end(), buf.begin() + off));
        for (size_t i = off + want8.size(); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xA5) << i;
      }
  }
}

// The encoder's fp16 / fp32 split kernels against element-by-element
// loops: residual bytes, fp16 3-bit parts, exponents and counts, for block
// lengths with and without a scalar head and tail, residual outputs aligned
// and not, regular and non-temporal stores, and the AVX-512 window counter
// on a window that holds the values, one that holds none, and off (-1); no
// byte written outside the block's parts.
TEST_P(CapacityCpu, Fp16Fp32E5m2SplitKernels) {
  ASSERT_EQ(cpu::capacity_target(), GetParam());
  constexpr size_t kGuard = 192;
  for (uint32_t m : {1u, 15u, 16u, 17u, 100u, 4096u + 31u, 65536u - 5u, 65536u})
    for (bool narrow : {false, true}) {  // exponents in a 16-value window (KV-like), or all bits random
      std::vector<uint8_t> in16(2 * size_t{m}), in32(4 * size_t{m}), in8(m);
      std::vector<uint8_t> want_res16(m), want_res32(3 * size_t{m}), want_e16(m), want_e32(m), want_e8(m);
      std::vector<uint8_t> want_high((3 * size_t{m} + 7) / 8, 0), want_high8(want_high.size(), 0);
      std::vector<uint64_t> want_c16(256, 0), want_c32(256, 0), want_c8(256, 0);
      for (uint32_t i = 0; i < m; ++i) {
        const uint64_t r = synth::random_u64(m + narrow, i);
        auto v16 = static_cast<uint16_t>(r);
        auto v32 = static_cast<uint32_t>(r >> 16);
        if (narrow) {
          v16 = static_cast<uint16_t>((v16 & 0x83FFu) | ((8 + (r >> 56) % 12) << 10));
          v32 = (v32 & 0x807FFFFFu) | static_cast<uint32_t>((110 + (r >> 56) % 14) << 23);
        }
        std::memcpy(&in16[2 * size_t{i}], &v16, 2);
        std::memcpy(&in32[4 * size_t{i}], &v32, 4);
        in8[i] = static_cast<uint8_t>(v16 >> 8);  // fp8_e5m2 is fp16's high byte
        const uint32_t r16 = Fp16Traits::residual(v16), r32 = Fp32Traits::residual(v32);
        want_res16[i] = static_cast<uint8_t>(r16);
        const uint64_t bit = 3 * uint64_t{i};
        const uint32_t h3 = (r16 >> 8) & 7u;
        want_high[bit >> 3] |= static_cast<uint8_t>(h3 << (bit & 7));
        if ((bit & 7) > 5) want_high[(bit >> 3) + 1] |= static_cast<uint8_t>(h3 >> (8 - (bit & 7)));
        for (uint32_t b = 0; b < 3; ++b) want_res32[3 * size_t{i} + b] = static_cast<uint8_t>(r32 >> (8 * b));
        want_e16[i] = static_cast<uint8_t>(Fp16Traits::exponent(v16));
        want_e32[i] = static_cast<uint8_t>(Fp32Traits::exponent(v32));
        ++want_c16[want_e16[i]];
        ++want_c32[want_e32[i]];
        const uint32_t h8 = Fp8E5M2Traits::residual(in8[i]);
        want_high8[bit >> 3] |= static_cast<uint8_t>(h8 << (bit & 7));
        if ((bit & 7) > 5) want_high8[(bit >> 3) + 1] |= static_cast<uint8_t>(h8 >> (8 - (bit & 7)));
        want_e8[i] = static_cast<uint8_t>(Fp8E5M2Traits::exponent(in8[i]));
        ++want_c8[want_e8[i]];
      }
      std::vector<uint8_t> res(3 * size_t{m} + 2 * kGuard), high(want_high.size() + 2 * kGuard), exps(m);
      const size_t align = (64 - reinterpret_cast<uintptr_t>(res.data()) % 64) % 64;
      for (bool stream : {false, true})
        for (size_t off : {align, align + 5, align + 16, align + 48})
          for (int32_t window : {-1, 0, 8, 110, 200}) {
            SCOPED_TRACE("m " + std::to_string(m) + " narrow " + std::to_string(narrow) + " stream " +
                         std::to_string(stream) + " off " + std::to_string(off) + " window " + std::to_string(window));
            const auto guarded = [&](const std::vector<uint8_t>& buf, size_t at, const std::vector<uint8_t>& want) {
              ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin() + static_cast<ptrdiff_t>(at)));
              for (size_t i = 0; i < at; ++i) ASSERT_EQ(buf[i], 0xA5) << "before, " << i;
              for (size_t i = at + want.size(); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xA5) << "after, " << i;
            };
            std::vector<uint64_t> counts(256, 0);
            int32_t w = window;
            std::fill(res.begin(), res.end(), 0xA5);
            std::fill(high.begin(), high.end(), 0xA5);
            cpu::cap_split_count_fp16(in16.data(), m, res.data() + off, high.data() + kGuard, exps.data(), stream,
                                      counts.data(), &w);
            guarded(res, off, want_res16);
            guarded(high, kGuard, want_high);
            ASSERT_EQ(exps, want_e16);
            ASSERT_EQ(counts, want_c16);
            std::fill(counts.begin(), counts.end(), 0);
            w = window;
            std::fill(res.begin(), res.end(), 0xA5);
            cpu::cap_split_count_fp32(in32.data(), m, res.data() + off, exps.data(), stream, counts.data(), &w);
            guarded(res, off, want_res32);
            ASSERT_EQ(exps, want_e32);
            ASSERT_EQ(counts, want_c32);
            if (stream || off != align) continue;  // the e5m2 split has no residual bytes to place
            std::fill(counts.begin(), counts.end(), 0);
            w = window;
            std::fill(high.begin(), high.end(), 0xA5);
            cpu::cap_split_count_e5m2(in8.data(), m, high.data() + kGuard, exps.data(), counts.data(), &w);
            guarded(high, kGuard, want_high8);
            ASSERT_EQ(exps, want_e8);
            ASSERT_EQ(counts, want_c8);
          }
    }
}

// Big outputs take the non-temporal joins (a threshold forced low here).
TEST_P(CapacityCpu, StreamingJoinRoundTrip) {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3}) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, 4 * 65536 + 999, 3, {});
    const auto ref = enc(d, in, false, 1, false);
    cpu::set_stream_min_bytes(1);
    for (int t : {1, 2}) {
      std::vector<uint8_t> out;
      const FrameOutcome o = dec(ref, in.size(), t, true, &out);
      EXPECT_EQ(o.status, Status::ok) << dtype_name(d);
      EXPECT_EQ(out, in) << dtype_name(d);
    }
    cpu::set_stream_min_bytes(0);
  }
}

TEST_P(CapacityCpu, GoldenErrorVectorsSameStatus) {
  const std::string dir = test::golden_dir() + "/../golden-errors/capacity";
  bool ok = false;
  const auto list = test::read_file(dir + "/LIST", &ok);
  ASSERT_TRUE(ok);
  std::string names(list.begin(), list.end());
  size_t at = 0;
  int count = 0;
  while (at < names.size()) {
    const size_t nl = names.find('\n', at);
    const std::string name = names.substr(at, nl - at);
    at = nl == std::string::npos ? names.size() : nl + 1;
    if (name.empty()) continue;
    const auto bin = test::read_file(dir + "/" + name + ".bin", &ok);
    ASSERT_TRUE(ok);
    std::vector<uint8_t> o1, o2;
    EXPECT_EQ(dec(bin, 1 << 20, 2, true, &o1).status, dec(bin, 1 << 20, 1, false, &o2).status) << name;
    ++count;
  }
  EXPECT_GE(count, 15);
}

// Random corruption of the exponent blocks: same status as the reference.
TEST_P(CapacityCpu, CorruptBlocksSameStatus) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 3 * 65536 + 77, 9, {});
  const auto f0 = enc(Dtype::bf16, in, false, 1, false);
  FrameHeader h;
  ASSERT_EQ(parse_header(f0.data(), f0.size(), &h), Status::ok);
  const CapLayout L = capacity_layout_of(h);
  int bad = 0;
  for (uint64_t t = 0; t < 400; ++t) {
    auto f = f0;
    const uint64_t i = L.blk_off + synth::random_u64(t, 1) % L.blk_size;
    f[i] ^= static_cast<uint8_t>(1u << (synth::random_u64(t, 2) % 8));
    std::vector<uint8_t> o1, o2;
    const Status a = dec(f, in.size(), 2, true, &o1).status;
    const Status b = dec(f, in.size(), 1, false, &o2).status;
    ASSERT_EQ(a, b) << "byte " << i;
    if (a == Status::ok) ASSERT_EQ(o1, o2);
    bad += a != Status::ok;
  }
  EXPECT_GT(bad, 20);  // a flipped code bit often decodes silently: the checksum catches those
}

// The frame's last block ends at the buffer's end and is decoded from a
// padded copy: corruption there gives the reference's status too, and an
// intact frame the same values.
TEST_P(CapacityCpu, CorruptLastBlockSameStatus) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 2 * 65536 + 50001, 4, {});
  const auto f0 = enc(Dtype::bf16, in, false, 1, false);
  FrameHeader h;
  ASSERT_EQ(parse_header(f0.data(), f0.size(), &h), Status::ok);
  const CapLayout L = capacity_layout_of(h);
  ASSERT_EQ(L.n_blocks, 3u);
  const uint64_t last = L.blk_off + load_le32(f0.data() + L.index_off) + load_le32(f0.data() + L.index_off + 4);
  const uint64_t last_size = L.blk_off + L.blk_size - last;
  ASSERT_GT(last_size, 1000u);
  ASSERT_GT(L.blk_off + L.blk_size + 16, f0.size());  // ends within 16 bytes of the buffer: the copy
  std::vector<uint8_t> o1, o2;
  ASSERT_EQ(dec(f0, in.size(), 1, true, &o1).status, Status::ok);
  ASSERT_EQ(o1, in);
  int bad = 0;
  for (uint64_t t = 0; t < 300; ++t) {
    auto f = f0;
    // Mostly the block's last bytes (the end of stream 31), some anywhere in it.
    const uint64_t span = t % 2 ? 64 : last_size;
    const uint64_t i = last + last_size - 1 - synth::random_u64(t, 3) % span;
    f[i] ^= static_cast<uint8_t>(1u << (synth::random_u64(t, 4) % 8));
    const Status a = dec(f, in.size(), 1, true, &o1).status;
    const Status b = dec(f, in.size(), 1, false, &o2).status;
    ASSERT_EQ(a, b) << "byte " << i;
    if (a == Status::ok) ASSERT_EQ(o1, o2);
    bad += a != Status::ok;
  }
  EXPECT_GT(bad, 20);
}

// The decoder keeps its scratch, and the lookups of the last table, per
// thread from frame to frame. One-block frames decoded in turn on one
// thread, each to its own values: A with exponent 127 - d, B with 120 + d
// for the same offsets d (the code lengths mirrored: the same table size
// and bit counts, other tables), C with A's table and other values. (B
// decoded with A's lookups would read the same code boundaries; the rows'
// tails check the lengths against B's table and send such a block to the
// reference decoder: with the reuse keyed on the table size alone this
// test still passes. A stale table shows as time, not as values.)
TEST_P(CapacityCpu, SmallFramesInTurnKeepNoStaleTable) {
  const uint32_t counts[8] = {1400, 700, 400, 220, 120, 80, 50, 30};
  std::vector<uint32_t> d;
  for (uint32_t k = 0; k < 8; ++k) d.insert(d.end(), counts[k], k);
  for (size_t i = d.size() - 1; i > 0; --i) std::swap(d[i], d[synth::random_u64(5, i) % (i + 1)]);
  const uint64_t n = d.size();
  auto make = [&](bool mirrored, uint64_t seed) {
    std::vector<uint8_t> in(2 * n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t r = synth::random_u64(seed, i);
      const uint32_t e = mirrored ? 120u + d[i] : 127u - d[i];
      const uint32_t v = (r & 0x8000u) | (e << 7) | ((r >> 32) & 0x7Fu);
      in[2 * i] = static_cast<uint8_t>(v);
      in[2 * i + 1] = static_cast<uint8_t>(v >> 8);
    }
    return in;
  };
  const std::vector<uint8_t> in[3] = {make(false, 1), make(true, 2), make(false, 3)};
  std::vector<uint8_t> f[3];
  for (int k = 0; k < 3; ++k) {
    f[k] = enc(Dtype::bf16, in[k], false, 1, false);
    FrameHeader h;
    ASSERT_EQ(parse_header(f[k].data(), f[k].size(), &h), Status::ok);
    ASSERT_EQ(h.mode, kModeCapacity);
  }
  // The test's premise: same table size, different tables (A and B). The
  // first block's table opens the block section.
  auto table_of = [](const std::vector<uint8_t>& fr) {
    FrameHeader h;
    EXPECT_EQ(parse_header(fr.data(), fr.size(), &h), Status::ok);
    return fr.data() + capacity_layout_of(h).blk_off;
  };
  const uint8_t* ta = table_of(f[0]);
  const uint8_t* tb = table_of(f[1]);
  ASSERT_EQ(ta[0], tb[0]);
  ASSERT_EQ(ta[1], tb[1]);
  ASSERT_NE(std::memcmp(ta, tb, cap_table_bytes(ta[0], ta[1])), 0);
  for (int k : {0, 1, 0, 2, 1, 1, 2, 0}) {
    std::vector<uint8_t> out;
    ASSERT_EQ(dec(f[k], in[k].size(), 1, true, &out).status, Status::ok) << "frame " << k;
    ASSERT_EQ(out, in[k]) << "frame " << k;
  }
}

// Called from inside a caller's parallel region (a batch's workers, or an
// application's own OpenMP team): with nested parallelism off, a request
// for 2 or 3 threads gets a team of one, and the one-thread path runs in
// the caller's team. Every block must still be coded (the same bytes as
// the oracle) and nothing may wait on the caller's team (a barrier bound
// to it would hang or skip blocks).
TEST_P(CapacityCpu, InsideCallersParallelRegion) {
  const uint64_t n = 5 * 65536 + 3;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 11, {});
  const auto ref = enc(Dtype::bf16, in, true, 1, false);
  std::vector<std::vector<uint8_t>> got(12);
  omp_set_max_active_levels(1);
#pragma omp parallel for num_threads(3) schedule(dynamic, 1)
  for (int i = 0; i < 12; ++i) got[static_cast<size_t>(i)] = enc(Dtype::bf16, in, true, 1 + i % 3, true);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], ref) << "call " << i;
}

SPLITZIP_INSTANTIATE_PER_TARGET(CapacityCpu);

}  // namespace
}  // namespace splitzip
