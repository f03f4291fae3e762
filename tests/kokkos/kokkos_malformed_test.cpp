// SPDX-License-Identifier: Apache-2.0
// Malformed coded frames: one targeted fault per FORMAT.md 9 rule 14-19,
// each must give the named status on both backends; then random payload
// corruption (often several faults at once) must give the reference's
// status, and the reference's output whenever the frame still decodes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/header.h"
#include "core/layout.h"
#include "core/le_bytes.h"
#include "tests/kokkos/kokkos_test_util.h"
#include "tests/support/backend_check.h"

namespace splitzip::test {
namespace {

using synth::Generator;

// A valid coded frame with escapes, an odd element count (code and 3-bit
// padding present) and a codebook of fewer than 16 entries (rule 18).
struct Sample {
  Dtype dtype;
  uint64_t n = 0;
  std::vector<uint8_t> frame;
  FrameHeader h;
  FrameLayout L{};
  uint64_t chunk = 0;

  uint32_t count(uint64_t c) const { return load_le16(&frame[L.count_off + 2 * c]); }
  uint64_t first_escape(uint64_t c) const {
    uint64_t k = 0;
    for (uint64_t q = 0; q < c; ++q) k += count(q);
    return k;
  }
  uint32_t pos(uint64_t k) const { return load_le16(&frame[L.pos_off + 2 * k]); }
  void set_pos(uint64_t k, uint32_t p) { store_le16(&frame[L.pos_off + 2 * k], p); }
  uint32_t code(uint64_t i) const { return nibble_at(&frame[L.code_off], i); }
  void set_code(uint64_t i, uint32_t c) {
    uint8_t& b = frame[L.code_off + i / 2];
    b = static_cast<uint8_t>((i & 1) ? (b & 0x0F) | (c << 4) : (b & 0xF0) | c);
  }
  // A chunk with at least `k` escapes.
  uint64_t chunk_with(uint32_t k) const {
    for (uint64_t c = 0; c < L.n_chunks; ++c)
      if (count(c) >= k) return c;
    return ~uint64_t{0};
  }
};

// The first K-entry prefix of the top-16 (K = 8..15) that gives a coded frame
// with escapes, two of them in one chunk; codes K..15 are then invalid.
Sample make_sample(Dtype d, bool checksum) {
  Sample s;
  s.dtype = d;
  s.n = 8191;  // odd, and 3n % 8 != 0
  const auto src = synth::generate(Generator::gaussian_kv, d, s.n, 77);
  Histogram hist(d);
  hist.add(src.data(), s.n);
  for (uint8_t k = 8; k < 16; ++k) {
    Codebook cb = hist.codebook();
    if (cb.count <= k) break;
    for (int i = k; i < 16; ++i) cb.entries[i] = 0;
    cb.count = k;
    CompressOptions o;
    o.codebook = &cb;
    o.chunk_log2 = 8;
    o.checksum = checksum;
    o.backend = "reference";
    s.frame.assign(compress_bound(d, s.n), 0);
    const Result r = compress(d, src.data(), s.n, s.frame.data(), s.frame.size(), o);
    if (r.status != Status::ok) break;
    s.frame.resize(r.size);
    if (parse_header(s.frame.data(), s.frame.size(), &s.h) != Status::ok || s.h.stored()) continue;
    s.L = layout_of(s.h);
    s.chunk = uint64_t{1} << s.h.chunk_log2;
    if (s.chunk_with(2) != ~uint64_t{0}) return s;
  }
  ADD_FAILURE() << "no coded sample with escapes for " << dtype_name(d);
  return s;
}

class KokkosMalformed : public ::testing::TestWithParam<Dtype> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kokkos_runs_host_buffers());
    s_ = make_sample(GetParam(), false);
    ASSERT_FALSE(s_.h.stored());
    ASSERT_NE(s_.chunk_with(2), ~uint64_t{0});
    ASSERT_LT(s_.h.codebook_count, 16u);
  }
  // Both backends must report `want` for the faulty frame f.
  void expect(const Sample& f, Status want, const char* what) {
    SCOPED_TRACE(std::string(what) + " dtype=" + dtype_name(f.dtype));
    const uint64_t cap = f.n * dtype_bytes(f.dtype);
    std::vector<uint8_t> out(cap);
    DecompressOptions o;
    o.backend = "kokkos";
    const Result r = decompress(f.frame.data(), f.frame.size(), out.data(), cap, o);
    EXPECT_EQ(r.status, want) << "kokkos: " << status_name(r.status) << ", want " << status_name(want);
    EXPECT_TRUE(same_decode_result("kokkos", f.frame.data(), f.frame.size(), cap));
    EXPECT_TRUE(same_decode(f.frame, cap));  // backend level: also the first corrupt block
  }
  Sample s_;
};

TEST_P(KokkosMalformed, ValidSampleDecodes) { expect(s_, Status::ok, "unmodified"); }

TEST_P(KokkosMalformed, Rule14Padding) {
  Sample f = s_;
  f.frame[f.L.code_off + f.L.code_size - 1] |= 0x10;  // high nibble after the odd last code
  expect(f, Status::bad_padding, "code padding nibble");
  if (f.L.high_size > 0) {
    f = s_;
    f.frame[f.L.high_off + f.L.high_size - 1] |= 0x80;  // 3n % 8 = 5: top 3 bits unused
    expect(f, Status::bad_padding, "3-bit padding bit");
  }
  // Every gap byte between streams (the frame rules' check, same status).
  Gap g[7];
  const int k = coded_gaps(s_.L, g);
  int gaps = 0;
  for (int st = 0; st < k; ++st)
    for (uint64_t b = g[st].off; b < g[st].off + g[st].size; ++b, ++gaps) {
      f = s_;
      f.frame[b] = 0x40;
      expect(f, Status::bad_padding, "gap byte");
    }
  EXPECT_GT(gaps, 0) << "sample has no gap bytes to corrupt";
}

TEST_P(KokkosMalformed, Rule15EscapeCounts) {
  Sample f = s_;
  const uint64_t last = f.L.n_chunks - 1;
  const uint64_t last_len = f.n - last * f.chunk;
  store_le16(&f.frame[f.L.count_off + 2 * last], static_cast<uint32_t>(last_len + 1));
  expect(f, Status::bad_escape_counts, "count over chunk length");
  f = s_;
  store_le16(&f.frame[f.L.count_off], f.count(0) + 1);  // sum != E
  expect(f, Status::bad_escape_counts, "counts do not sum to E");
}

TEST_P(KokkosMalformed, Rule16EscapePositions) {
  const uint64_t c = s_.chunk_with(2);
  const uint64_t k = s_.first_escape(c);
  Sample f = s_;
  const uint32_t a = f.pos(k), b = f.pos(k + 1);
  f.set_pos(k, b);
  f.set_pos(k + 1, a);
  expect(f, Status::bad_escape_position, "positions swapped");
  f = s_;
  f.set_pos(k + 1, f.pos(k));
  expect(f, Status::bad_escape_position, "duplicate position");
  f = s_;
  f.set_pos(k, 0xFFFF);  // past any chunk of 2^8 elements
  expect(f, Status::bad_escape_position, "position past chunk");
}

TEST_P(KokkosMalformed, Rule17EscapeValues) {
  const uint64_t c = s_.chunk_with(1);
  const uint64_t k = s_.first_escape(c);
  const uint64_t i = c * s_.chunk + s_.pos(k);
  Sample f = s_;
  f.set_code(i, 3);
  expect(f, Status::bad_escape_value, "escape slot holds a non-zero code");
  f = s_;
  f.frame[f.L.exp_off + k] = f.h.codebook[5];
  expect(f, Status::bad_escape_value, "escape exponent in codebook");
  if (GetParam() == Dtype::fp16 || GetParam() == Dtype::fp8_e5m2) {
    f = s_;
    f.frame[f.L.exp_off + k] = 40;
    expect(f, Status::bad_escape_value, "escape exponent >= 32 for a 5-bit dtype");
  }
}

TEST_P(KokkosMalformed, Rule18Codes) {
  Sample f = s_;
  uint64_t i = 0;
  while (f.code(i) == 0) ++i;  // a non-escape slot (escape slots hold 0)
  f.set_code(i, f.h.codebook_count);  // one past the last entry
  expect(f, Status::bad_code, "code past codebook");
  f = s_;
  i = f.n - 1;
  while (f.code(i) == 0) --i;  // the last non-escape slot
  f.set_code(i, 15);
  expect(f, Status::bad_code, "late code 15");
}

TEST_P(KokkosMalformed, Rule19Checksum) {
  Sample f = make_sample(GetParam(), true);
  ASSERT_TRUE(f.h.has_checksum());
  expect(f, Status::ok, "valid with checksum");
  if (f.L.res_size > 0)
    f.frame[f.L.res_off + 100] ^= 0x01;  // a residual bit: still decodes, wrong value
  else
    f.frame[f.L.high_off + 100] ^= 0x01;
  expect(f, Status::checksum_mismatch, "residual bit flipped");
  // Gaps of a frame with stream 7 (block checks) too.
  Gap g[7];
  const int k = coded_gaps(f.L, g);
  ASSERT_GT(k, 0);
  Sample z = make_sample(GetParam(), true);
  z.frame[g[k - 1].off + g[k - 1].size - 1] = 1;
  expect(z, Status::bad_padding, "last gap byte of a checksummed frame");
}

// Random corruption of 1-4 payload bytes: often several faults at once; the
// Kokkos decoder reports the lowest failing rule like the reference.
TEST_P(KokkosMalformed, RandomPayloadCorruptionSameStatus) {
  int decoded = 0, rejected = 0;
  for (uint64_t t = 0; t < 400; ++t) {
    Sample f = s_;
    const uint64_t payload = f.frame.size() - 64;
    const uint64_t flips = 1 + synth::random_u64(t, 0) % 4;
    for (uint64_t j = 0; j < flips; ++j) {
      const uint64_t at = 64 + synth::random_u64(t, 1 + 2 * j) % payload;
      f.frame[at] ^= static_cast<uint8_t>(1 + synth::random_u64(t, 2 + 2 * j) % 255);
    }
    const uint64_t cap = f.n * dtype_bytes(f.dtype);
    ASSERT_TRUE(same_decode_result("kokkos", f.frame.data(), f.frame.size(), cap)) << "trial " << t;
    std::vector<uint8_t> out(cap);
    DecompressOptions o;
    o.backend = "reference";
    (decompress(f.frame.data(), f.frame.size(), out.data(), cap, o).ok() ? decoded : rejected)++;
  }
  // Both outcomes must have been exercised for the comparison to mean much.
  EXPECT_GT(decoded, 0);
  EXPECT_GT(rejected, 0);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, KokkosMalformed, ::testing::ValuesIn(kAllDtypes),
                         [](const ::testing::TestParamInfo<Dtype>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace splitzip::test
