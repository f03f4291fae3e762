// SPDX-License-Identifier: Apache-2.0
// Malformed coded frames: the CPU backend returns the reference's status
// (and, on success, its output) for every single-byte corruption of the
// payload and for targeted faults of rules 14-18, per Highway target and
// with 1 and several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/header.h"
#include "core/layout.h"
#include "core/synthetic.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/backend_check.h"

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

SPLITZIP_INSTANTIATE_PER_TARGET(CpuMalformed);

}  // namespace
}  // namespace splitzip
