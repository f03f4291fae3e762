// SPDX-License-Identifier: Apache-2.0
// Malformed frames: the CPU backend returns the reference's status (and,
// on success, its output) for every single-byte corruption of the payload,
// for targeted faults of rules 14-18, and for corrupted checksummed frames
// (with the first corrupt block), per Highway target, 1 and several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/codec_args.h"
#include "core/header.h"
#include "core/layout.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/backend_check.h"
#include "tests/support/synthetic.h"

namespace splitzip {
namespace {

using cpu_test::kDtypes;

uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

struct Sample {
  Dtype dtype;
  uint64_t n;
  std::vector<uint8_t> input, frame;
  FrameHeader h;
  FrameLayout L;
};

// Coded, no checksum (faults must reach rules 14-18), odd n, chunk 64 (many
// chunks, a partial last one). A short codebook (count < 16) makes rule 18
// reachable and escapes plentiful; 16 is the dynamic case.
Sample make_sample_with(Dtype d, uint8_t codebook_count, uint64_t n) {
  Sample s;
  s.dtype = d;
  s.n = n;
  synth::Params p;
  p.escape_rate = 0.01;
  s.input = synth::generate(synth::Generator::heavy_tail, d, s.n, 77, p);
  s.frame.resize(compress_bound(d, s.n));
  const Codebook cb = cpu_test::body_prefix(d, codebook_count);
  CompressOptions o;
  o.chunk_log2 = 6;
  o.backend = "reference";
  if (codebook_count < 16) o.codebook = &cb;
  const Result r = compress(d, s.input.data(), s.n, s.frame.data(), s.frame.size(), o);
  EXPECT_TRUE(r.ok());
  s.frame.resize(r.size);
  EXPECT_EQ(parse_header(s.frame.data(), s.frame.size(), &s.h), Status::ok);
  if (!s.h.stored()) s.L = layout_of(s.h);
  return s;
}

// The shortest codebook from codebook_count up that keeps the frame coded
// (fp8 stores sooner: its escapes cost more than its coded elements save).
Sample make_sample(Dtype d, uint8_t codebook_count, uint64_t n) {
  for (uint8_t k = codebook_count; k <= 16; ++k) {
    Sample s = make_sample_with(d, k, n);
    if (!s.h.stored() && s.h.escape_count > 5) return s;
  }
  ADD_FAILURE() << "no coded sample for " << dtype_name(d);
  return {};
}

Status decode_with(const char* backend, const std::vector<uint8_t>& f, uint64_t out_bytes, int threads = 0) {
  std::vector<uint8_t> dst(out_bytes);
  DecompressOptions o;
  o.backend = backend;
  o.threads = threads;
  return decompress(f.data(), f.size(), dst.data(), dst.size(), o).status;
}

class CpuMalformed : public cpu_test::PerTarget {};

TEST_P(CpuMalformed, EveryPayloadByteCorruptionMatchesReference) {
  for (Dtype d : kDtypes) {
    for (uint8_t count : {uint8_t{5}, uint8_t{16}}) {
      const Sample s = make_sample(d, count, 1001);
      ASSERT_FALSE(s.frame.empty());
      for (int threads : {1, 3}) {
        cpu::set_thread_override(threads);
        const std::vector<uint8_t> masks =
            threads == 1 ? std::vector<uint8_t>{0x01, 0x10, 0x80, 0xFF} : std::vector<uint8_t>{0xFF};
        for (uint64_t at = 64; at < s.frame.size(); ++at) {
          for (uint8_t mask : masks) {
            std::vector<uint8_t> f = s.frame;
            f[at] ^= mask;
            ASSERT_TRUE(test::same_decode_result("cpu", f.data(), f.size(), s.input.size()))
                << dtype_name(d) << " count=" << int(count) << " threads=" << threads << " byte " << at
                << " ^= " << int(mask);
          }
        }
      }
      cpu::set_thread_override(0);
    }
  }
}

// One fault per frame, each with the status FORMAT.md section 9 names.
TEST_P(CpuMalformed, TargetedFaultsGiveTheirRule) {
  for (Dtype d : kDtypes) {
    const Sample s = make_sample(d, 5, 2001);
    ASSERT_FALSE(s.frame.empty());
    ASSERT_LT(s.h.codebook_count, 16);  // code 15 must be past the count (rule 18)
    const FrameLayout& L = s.L;
    const uint64_t chunk = 64;
    auto expect = [&](const char* what, auto&& edit, Status want) {
      std::vector<uint8_t> f = s.frame;
      edit(f);
      for (int threads : {1, 2, 7}) {
        EXPECT_EQ(decode_with("cpu", f, s.input.size(), threads), want)
            << dtype_name(d) << " " << what << " threads=" << threads;
      }
      EXPECT_EQ(decode_with("reference", f, s.input.size()), want) << dtype_name(d) << " " << what;
    };
    // The escapes' element indices, in stream order.
    std::vector<uint64_t> where;
    std::vector<uint64_t> chunk_first;  // first escape index of each chunk
    for (uint64_t q = 0, e = 0; q < L.n_chunks; ++q) {
      chunk_first.push_back(e);
      for (uint16_t k = 0; k < get16(&s.frame[L.count_off + 2 * q]); ++k, ++e)
        where.push_back(q * chunk + get16(&s.frame[L.pos_off + 2 * e]));
    }
    ASSERT_EQ(where.size(), s.h.escape_count);

    expect("padding nibble", [&](auto& f) { f[L.code_off + L.code_size - 1] |= 0x10; }, Status::bad_padding);
    if (L.high_size)
      expect("3-bit padding", [&](auto& f) { f[L.high_off + L.high_size - 1] |= 0x80; }, Status::bad_padding);
    expect("count > chunk", [&](auto& f) { put16(&f[L.count_off], 65); }, Status::bad_escape_counts);
    expect("sum != E", [&](auto& f) { put16(&f[L.count_off], get16(&f[L.count_off]) + 1); },
           Status::bad_escape_counts);
    // Move one escape count between chunks: the sum holds, rules 16/17 catch it.
    uint64_t qa = 0;
    while (get16(&s.frame[L.count_off + 2 * qa]) < 2) ++qa;
    const uint64_t e0 = chunk_first[qa];
    expect("positions swapped", [&](auto& f) {
      std::swap(f[L.pos_off + 2 * e0], f[L.pos_off + 2 * e0 + 2]);
      std::swap(f[L.pos_off + 2 * e0 + 1], f[L.pos_off + 2 * e0 + 3]);
    }, Status::bad_escape_position);
    expect("position past last chunk", [&](auto& f) {
      put16(&f[L.pos_off + 2 * (s.h.escape_count - 1)], 0xFFFF);
    }, Status::bad_escape_position);
    expect("escape slot code non-zero", [&](auto& f) {
      const uint64_t i = where[0];
      f[L.code_off + i / 2] |= static_cast<uint8_t>(1u << (4 * (i & 1)));
    }, Status::bad_escape_value);
    expect("escape exponent in codebook", [&](auto& f) { f[L.exp_off + 1] = s.h.codebook[2]; },
           Status::bad_escape_value);
    if (geometry_of(static_cast<uint32_t>(d)).exp_bits == 5)
      expect("escape exponent >= 32", [&](auto& f) { f[L.exp_off] = 40; }, Status::bad_escape_value);
    // A non-escape element's code set to 15 (>= count 5).
    uint64_t plain = 0;
    while (std::find(where.begin(), where.end(), plain) != where.end()) ++plain;
    expect("code >= count", [&](auto& f) { f[L.code_off + plain / 2] |= static_cast<uint8_t>(0xF << (4 * (plain & 1))); },
           Status::bad_code);
    // Last element (n odd: low nibble of the last byte), past every vector.
    const uint64_t last = s.n - 1;
    if (std::find(where.begin(), where.end(), last) == where.end())
      expect("last code >= count", [&](auto& f) { f[L.code_off + last / 2] |= 0x0F; }, Status::bad_code);
    // Two faults: the lower rule wins (17 beats 18 when the escape slot holds 15).
    expect("escape slot code 15", [&](auto& f) {
      const uint64_t i = where[1];
      f[L.code_off + i / 2] |= static_cast<uint8_t>(0xF << (4 * (i & 1)));
    }, Status::bad_escape_value);
  }
}

Result decode_result(const char* backend, const std::vector<uint8_t>& f, uint64_t out_bytes, int threads,
                     std::vector<uint8_t>* out = nullptr) {
  std::vector<uint8_t> dst(out_bytes);
  DecompressOptions o;
  o.backend = backend;
  o.threads = threads;
  const Result r = decompress(f.data(), f.size(), dst.data(), dst.size(), o);
  if (out != nullptr) *out = dst;
  return r;
}

// A checksummed frame (stored or coded) with one flipped payload bit:
// CHECKSUM_MISMATCH naming the block of that bit, from the cpu backend at
// every thread count and from the reference; a flipped check (stream 7)
// names its own block.
TEST_P(CpuMalformed, ChecksumMismatchNamesTheCorruptBlock) {
  for (Dtype d : kDtypes) {
    const uint32_t eb = dtype_bytes(d);
    const uint64_t n = 5 * (65536 / eb) + 777;  // 6 blocks, the last one short
    const uint64_t bytes = n * eb;
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 41);
    for (bool stored : {false, true}) {
      std::vector<uint8_t> frame(compress_bound(d, n));
      CompressOptions o;
      o.checksum = true;
      o.backend = "reference";
      // A capacity below the coded size forces nothing; a stored frame comes
      // from random bits (no codebook wins).
      const auto rnd = synth::generate(synth::Generator::random_bits, d, n, 42);
      const auto& src = stored ? rnd : in;
      const Result r = compress(d, src.data(), n, frame.data(), frame.size(), o);
      ASSERT_TRUE(r.ok());
      frame.resize(r.size);
      FrameHeader h;
      ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
      ASSERT_EQ(h.stored(), stored) << dtype_name(d);
      ASSERT_EQ(h.n_checks(), 6u);
      // (frame byte, block it corrupts, mask)
      struct Hit {
        uint64_t at, block;
        uint8_t mask;
      };
      std::vector<Hit> hits;
      const uint64_t check_off = stored ? stored_check_off(h.dtype, n) : layout_of(h).check_off;
      if (stored) {
        for (uint64_t off : {uint64_t{0}, uint64_t{65535}, uint64_t{65536}, uint64_t{3 * 65536 + 100}, bytes - 1})
          hits.push_back({64 + off, off >> 16, 0x01});
      } else {
        const FrameLayout L = layout_of(h);
        const uint32_t k = geometry_of(h.dtype).res_bytes;
        for (uint64_t i : {uint64_t{0}, uint64_t{65536} / eb - 1, uint64_t{65536} / eb, 3 * (uint64_t{65536} / eb) + 5, n - 1}) {
          if (k > 0) {  // a residual byte of element i (stream 1)
            hits.push_back({L.res_off + i * k + k - 1, i * eb >> 16, 0x01});
          } else {      // fp8: bit 0 of the 3-bit part's byte holding element i's first bit
            const uint64_t byte = 3 * i / 8;
            hits.push_back({L.high_off + byte, (8 * byte / 3) * eb >> 16, 0x01});
          }
        }
      }
      hits.push_back({check_off + 4 * 4 + 2, 4, 0x40});  // the 5th block's check
      for (const Hit& hit : hits) {
        std::vector<uint8_t> f = frame;
        f[hit.at] ^= hit.mask;
        const Result want = decode_result("reference", f, bytes, 1);
        EXPECT_EQ(want.status, Status::checksum_mismatch) << dtype_name(d) << " byte " << hit.at;
        EXPECT_EQ(want.corrupt_block, hit.block) << dtype_name(d) << " byte " << hit.at;
        for (int t : {1, 2, 3, 7}) {
          const Result got = decode_result("cpu", f, bytes, t);
          EXPECT_EQ(got.status, Status::checksum_mismatch)
              << dtype_name(d) << " stored=" << stored << " byte " << hit.at << " threads=" << t;
          EXPECT_EQ(got.corrupt_block, hit.block)
              << dtype_name(d) << " stored=" << stored << " byte " << hit.at << " threads=" << t;
        }
        // Not verifying: the frame decodes (to the corrupted values).
        std::vector<uint8_t> a, b;
        DecompressOptions no;
        no.verify_checksum = false;
        for (const char* be : {"cpu", "reference"}) {
          no.backend = be;
          std::vector<uint8_t>& dst = be[0] == 'c' ? a : b;
          dst.assign(bytes, 0);
          EXPECT_TRUE(decompress(f.data(), f.size(), dst.data(), bytes, no).ok()) << be;
        }
        EXPECT_EQ(a, b);
      }
      // Intact: decodes, verified, no block named.
      std::vector<uint8_t> out;
      const Result ok = decode_result("cpu", frame, bytes, 3, &out);
      EXPECT_TRUE(ok.ok());
      EXPECT_EQ(ok.corrupt_block, kNoBlock);
      EXPECT_EQ(out, src);
    }
  }
}

// A v1 frame (XXH64 header check and content checksum, no block checks)
// still decodes; a corrupted payload byte is CHECKSUM_MISMATCH, no block.
TEST_P(CpuMalformed, V1FramesDecodeAndVerify) {
  for (Dtype d : kDtypes) {
    const uint64_t n = 100003;
    const uint64_t bytes = n * dtype_bytes(d);
    for (synth::Generator g : {synth::Generator::gaussian_kv, synth::Generator::random_bits}) {
      const auto in = synth::generate(g, d, n, 5);
      std::vector<uint8_t> frame(compress_bound(d, n));
      CompressOptions o;
      o.backend = "reference";
      o.checksum = false;  // v1 frames carry no block checks (stream 7)
      const Result r = compress(d, in.data(), n, frame.data(), frame.size(), o);
      ASSERT_TRUE(r.ok());
      frame.resize(r.size);
      FrameHeader h;
      ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
      h.version = 1;
      h.flags |= kFlagChecksum;
      h.block_log2 = 0;
      h.content_checksum = xxh64(in.data(), bytes, 0);
      write_header(h, frame.data());
      for (int t : {1, 3}) {
        std::vector<uint8_t> out;
        const Result ok = decode_result("cpu", frame, bytes, t, &out);
        ASSERT_TRUE(ok.ok()) << status_name(ok.status);
        EXPECT_EQ(out, in);
        std::vector<uint8_t> f = frame;
        f[64 + 1000] ^= 0x01;  // stream 1 or the stored data, or fp8's 3-bit part
        const Result bad = decode_result("cpu", f, bytes, t);
        EXPECT_EQ(bad.status, Status::checksum_mismatch) << dtype_name(d);
        EXPECT_EQ(bad.corrupt_block, kNoBlock);
        EXPECT_TRUE(test::same_decode_result("cpu", f.data(), f.size(), bytes));
      }
    }
  }
}

SPLITZIP_INSTANTIATE_PER_TARGET(CpuMalformed);

}  // namespace
}  // namespace splitzip
