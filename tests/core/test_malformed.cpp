// SPDX-License-Identifier: Apache-2.0
// Malformed frames: each fault gets its own status (FORMAT.md 9), nothing
// crashes or reads out of bounds (run under ASan), every bit flip is caught
// or changes the output.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "backends/registry.h"
#include "core/header.h"
#include "core/layout.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/malformed.h"
#include "tests/support/synthetic.h"

namespace splitzip {
namespace {

const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// Recomputes header_check so a modified header reaches the later rules.
// header_check is XXH3 (v2) or XXH64 (v1) by the version byte.
void reseal(std::vector<uint8_t>& f) {
  const uint32_t c = header_check(f.data());
  for (int i = 0; i < 4; ++i) f[52 + i] = static_cast<uint8_t>(c >> (8 * i));
}

struct Sample {
  Dtype dtype;
  uint64_t n;
  std::vector<uint8_t> input, frame;
  FrameHeader h;
  FrameLayout L;
};

// A coded frame with escapes, odd n (code and 3-bit padding), a partial last chunk,
// chunk 64 and a checksum.
Sample coded_sample(Dtype d, bool checksum = true) {
  Sample s;
  s.dtype = d;
  s.n = 2001;
  synth::Params p;
  p.escape_rate = 0.01;
  s.input = synth::generate(synth::Generator::heavy_tail, d, s.n, 31, p);
  s.frame.resize(compress_bound(d, s.n));
  CompressOptions o;
  o.chunk_log2 = 6;
  o.checksum = checksum;
  const Result r = compress(d, s.input.data(), s.n, s.frame.data(), s.frame.size(), o);
  EXPECT_TRUE(r.ok());
  s.frame.resize(r.size);
  EXPECT_EQ(parse_header(s.frame.data(), s.frame.size(), &s.h), Status::ok);
  EXPECT_FALSE(s.h.stored());
  EXPECT_EQ(s.h.codebook_count, 16);
  EXPECT_GT(s.h.escape_count, 5u);
  s.L = layout_of(s.h);
  return s;
}

Sample stored_sample(Dtype d) {
  Sample s;
  s.dtype = d;
  s.n = 1001;
  s.input = synth::generate(synth::Generator::random_bits, d, s.n, 32);
  s.frame.resize(compress_bound(d, s.n));
  CompressOptions o;
  o.checksum = true;
  const Result r = compress(d, s.input.data(), s.n, s.frame.data(), s.frame.size(), o);
  EXPECT_TRUE(r.ok());
  s.frame.resize(r.size);
  EXPECT_EQ(parse_header(s.frame.data(), s.frame.size(), &s.h), Status::ok);
  EXPECT_TRUE(s.h.stored());
  return s;
}

Status decode(const std::vector<uint8_t>& f, const Sample& s, std::vector<uint8_t>* out = nullptr,
              const DecompressOptions& o = {}) {
  std::vector<uint8_t> local;
  std::vector<uint8_t>& dst = out ? *out : local;
  dst.assign(s.input.size(), 0);
  return decompress(f.data(), f.size(), dst.data(), dst.size(), o).status;
}

class Malformed : public ::testing::TestWithParam<Dtype> {};

TEST_P(Malformed, TruncatedAtEveryByte) {
  for (const Sample& s : {coded_sample(GetParam()), stored_sample(GetParam())}) {
    std::vector<uint8_t> dst(s.input.size());
    for (uint64_t len = 0; len < s.frame.size(); ++len) {
      // A fresh heap copy of exactly len bytes: ASan flags any over-read.
      std::vector<uint8_t> cut(s.frame.begin(), s.frame.begin() + static_cast<long>(len));
      ASSERT_EQ(decompress(cut.data(), len, dst.data(), dst.size()).status, Status::truncated) << len;
      // An empty stream holds zero frames; any partial frame is TRUNCATED.
      ASSERT_EQ(decompress_frames(cut.data(), len, dst.data(), dst.size()).status,
                len == 0 ? Status::ok : Status::truncated) << len;
      FrameInfo info;
      ASSERT_EQ(frame_info(cut.data(), len, &info), Status::truncated) << len;
    }
    EXPECT_EQ(decode(s.frame, s), Status::ok);
  }
}

TEST_P(Malformed, EverySingleBitFlipIsCaughtOrChangesOutput) {
  for (bool checksum : {false, true}) {
    const Sample s = coded_sample(GetParam(), checksum);
    std::map<Status, int> seen;
    for (uint64_t bit = 0; bit < 8 * s.frame.size(); ++bit) {
      std::vector<uint8_t> f = s.frame;
      f[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      std::vector<uint8_t> out;
      const Status st = decode(f, s, &out);
      ++seen[st];
      if (st == Status::ok) {
        ASSERT_FALSE(checksum) << "bit " << bit << " passed the checksum";
        ASSERT_NE(out, s.input) << "bit " << bit << " decoded to the original";
      }
    }
    // The header is sealed: without re-sealing, header flips are HEADER_CORRUPT
    // (or an earlier rule); payload flips reach the payload rules.
    EXPECT_GT(seen[Status::header_corrupt], 0);
    if (checksum) {
      EXPECT_GT(seen[Status::checksum_mismatch], 0);
    }
  }
}

TEST_P(Malformed, HeaderFlipsResealedReachEachValidator) {
  const Sample s = coded_sample(GetParam());
  std::map<Status, int> seen;
  for (uint32_t byte = 0; byte < 64; ++byte) {
    if (byte >= 52 && byte < 56) continue;  // header_check itself
    for (uint32_t b = 0; b < 8; ++b) {
      std::vector<uint8_t> f = s.frame;
      f[byte] ^= static_cast<uint8_t>(1u << b);
      reseal(f);
      std::vector<uint8_t> out;
      const Status st = decode(f, s, &out);
      ++seen[st];
      ASSERT_NE(st, Status::ok) << "byte " << byte << " bit " << b;  // checksum on: nothing slips through
      ASSERT_NE(st, Status::header_corrupt);
    }
  }
  for (Status want : {Status::bad_magic, Status::unsupported_version, Status::bad_dtype, Status::reserved_bits,
                      Status::bad_chunk_size, Status::bad_header, Status::bad_codebook, Status::size_mismatch})
    EXPECT_GT(seen[want], 0) << status_name(want);
}

TEST_P(Malformed, EachHeaderFaultHasItsOwnStatus) {
  const Dtype d = GetParam();
  const Sample s = coded_sample(d);
  auto expect = [&](auto&& edit, Status want, bool seal = true) {
    std::vector<uint8_t> f = s.frame;
    edit(f);
    if (seal) reseal(f);
    EXPECT_EQ(decode(f, s), want) << status_name(want);
    FrameInfo info;
    if (static_cast<int>(want) <= static_cast<int>(Status::size_mismatch)) {
      EXPECT_EQ(frame_info(f.data(), f.size(), &info), want) << status_name(want);
    }
  };
  expect([](auto& f) { f[0] = 'X'; }, Status::bad_magic, false);
  expect([](auto& f) { f[4] = 4; }, Status::unsupported_version, false);
  // v3 (FORMAT.md 12): relabelled, the check fails; resealed, a frame without a
  // v3 feature is not in its lowest version.
  expect([](auto& f) { f[4] = 3; }, Status::header_corrupt, false);
  expect([](auto& f) { f[4] = 3; }, Status::bad_header);
  expect([](auto& f) { f[4] = 0; }, Status::unsupported_version, false);
  // v2 -> v1 without the v1 check: corrupt; resealed as v1, byte 50 is reserved there.
  expect([](auto& f) { f[4] = 1; }, Status::header_corrupt, false);
  expect([](auto& f) { f[4] = 1; }, Status::reserved_bits);
  expect([](auto& f) { f[20] ^= 1; }, Status::header_corrupt, false);
  expect([](auto& f) { f[53] ^= 0x80; }, Status::header_corrupt, false);
  expect([](auto& f) { f[5] = 0; }, Status::bad_dtype);
  expect([](auto& f) { f[5] = 6; }, Status::bad_dtype);  // 5 is fp8_e4m3 in v2
  expect([](auto& f) { f[5] = 255; }, Status::bad_dtype);
  for (uint8_t bit = 3; bit < 8; ++bit)
    expect([bit](auto& f) { f[6] |= static_cast<uint8_t>(1u << bit); }, Status::reserved_bits);
  // Bit 2 is TENSOR (v2, FORMAT.md 4.8): without a section the size is wrong.
  expect([](auto& f) { f[6] |= 4; }, Status::size_mismatch);
  expect([](auto& f) { f[51] = 1; }, Status::reserved_bits);
  expect([](auto& f) { f[51] = 0x80; }, Status::reserved_bits);
  expect([](auto& f) { f[49] = 1; }, Status::bad_header);   // mode 1: reserved for a future mode
  expect([](auto& f) { f[49] = 255; }, Status::bad_header);
  expect([](auto& f) { f[50] = 15; }, Status::bad_header);  // block_log2 must be 16 with CHECKSUM
  expect([](auto& f) { f[50] = 0; }, Status::bad_header);
  expect([](auto& f) { f[7] = 5; }, Status::bad_chunk_size);
  expect([](auto& f) { f[7] = 16; }, Status::bad_chunk_size);
  expect([](auto& f) { f[7] = 0; }, Status::bad_chunk_size);
  expect([](auto& f) { put64(&f[8], (uint64_t{1} << 56) + 1); }, Status::bad_header);
  expect([](auto& f) { put64(&f[8], ~uint64_t{0}); }, Status::bad_header);
  expect([&](auto& f) { put64(&f[16], s.n + 1); }, Status::bad_header);
  expect([](auto& f) { f[6] &= static_cast<uint8_t>(~kFlagChecksum); }, Status::bad_header);  // checksum w/o flag
  expect([](auto& f) { f[6] |= kFlagStored; }, Status::bad_header);  // stored with escapes/codebook
  expect([](auto& f) { f[48] = 0; }, Status::bad_codebook);
  expect([](auto& f) { f[48] = 17; }, Status::bad_codebook);
  expect([](auto& f) { f[33] = f[32]; }, Status::bad_codebook);  // duplicate
  if (geometry_of(static_cast<uint32_t>(d)).exp_bits == 5) expect([](auto& f) { f[32] = 32; }, Status::bad_codebook);
  expect([](auto& f) { f[48] = 15; }, Status::bad_codebook);  // entry 15 non-zero past count
  expect([](auto& f) { put64(&f[24], get64(&f[24]) + 16); }, Status::size_mismatch);
  expect([](auto& f) { put64(&f[24], get64(&f[24]) - 16); }, Status::size_mismatch);
  expect([](auto& f) { put64(&f[24], 0); }, Status::size_mismatch);
  // Lying counts that keep frame_size consistent go on to the payload rules.
  expect([&](auto& f) {
    const uint64_t e = s.h.escape_count - 1;
    put64(&f[16], e);
    const FrameLayout L2 = coded_layout(static_cast<uint32_t>(d), s.n, 6, e, s.h.n_checks());
    // Rebuild the tail at the new offsets so only the total disagrees.
    std::vector<uint8_t> g(f.begin(), f.begin() + static_cast<long>(L2.pos_off));
    g.resize(L2.frame_size, 0);
    std::memcpy(&g[L2.pos_off], &s.frame[s.L.pos_off], 2 * e);
    std::memcpy(&g[L2.exp_off], &s.frame[s.L.exp_off], e);
    std::memcpy(&g[L2.check_off], &s.frame[s.L.check_off], s.L.check_size);
    put64(&g[24], L2.frame_size);
    f = g;
  }, Status::bad_escape_counts);
}

TEST_P(Malformed, DestinationAndLimit) {
  const Sample s = coded_sample(GetParam());
  std::vector<uint8_t> dst(s.input.size());
  EXPECT_EQ(decompress(s.frame.data(), s.frame.size(), dst.data(), dst.size() - 1).status, Status::dst_too_small);
  EXPECT_EQ(decompress(s.frame.data(), s.frame.size(), nullptr, 0).status, Status::dst_too_small);
  DecompressOptions o;
  o.max_output_bytes = s.input.size() - 1;
  // Rule 12 before rule 13.
  EXPECT_EQ(decompress(s.frame.data(), s.frame.size(), dst.data(), 1, o).status, Status::limit_exceeded);
  o.max_output_bytes = s.input.size();
  EXPECT_EQ(decompress(s.frame.data(), s.frame.size(), dst.data(), dst.size(), o).status, Status::ok);
  // A frame claiming 2^56 elements is refused before any allocation.
  std::vector<uint8_t> f = s.frame;
  f[6] = kFlagStored;
  f[50] = 0;  // block_log2: no checksum
  put64(&f[8], uint64_t{1} << 56);
  put64(&f[16], 0);
  std::memset(&f[32], 0, 17);
  put64(&f[56], 0);
  put64(&f[24], stored_frame_size(static_cast<uint32_t>(s.dtype), uint64_t{1} << 56));
  reseal(f);
  EXPECT_EQ(decompress(f.data(), f.size(), dst.data(), dst.size()).status, Status::truncated);
  o.max_output_bytes = 1 << 20;
  // Claiming a huge source: rule 12 stops before any payload byte is read.
  EXPECT_EQ(decompress(f.data(), ~uint64_t{0}, dst.data(), dst.size(), o).status, Status::limit_exceeded);
}

TEST_P(Malformed, PayloadFaults) {
  const Dtype d = GetParam();
  const Sample s = coded_sample(d);
  const FrameLayout& L = s.L;
  auto expect = [&](auto&& edit, Status want) {
    std::vector<uint8_t> f = s.frame;
    edit(f);
    EXPECT_EQ(decode(f, s), want) << status_name(want);
  };
  // Rule 14: code padding nibble (n odd), 3-bit padding, gap bytes, tail.
  expect([&](auto& f) { f[L.code_off + L.code_size - 1] |= 0x10; }, Status::bad_padding);
  if (L.high_size) expect([&](auto& f) { f[L.high_off + L.high_size - 1] |= 0x80; }, Status::bad_padding);
  uint64_t gaps = 0;
  const uint64_t ends[] = {L.res_off + L.res_size, L.high_off + L.high_size, L.code_off + L.code_size,
                           L.count_off + L.count_size, L.pos_off + L.pos_size, L.exp_off + L.exp_size,
                           L.check_off + L.check_size};
  ASSERT_EQ(L.check_size, 4u * s.h.n_checks());
  ASSERT_NE((L.check_off + L.check_size) % 16, 0u) << "sample needs a gap after stream 7";
  for (uint64_t end : ends) {
    if (end % 16 == 0) continue;
    ++gaps;
    expect([&](auto& f) { f[end] = 1; }, Status::bad_padding);
    expect([&](auto& f) { f[align16(end) - 1] = 0x80; }, Status::bad_padding);
  }
  EXPECT_GT(gaps, 0u);
  // Rule 15: a count past its chunk length; counts not summing to E.
  expect([&](auto& f) { put16(&f[L.count_off], 65); }, Status::bad_escape_counts);
  expect([&](auto& f) { put16(&f[L.count_off + 2 * (L.n_chunks - 1)], 42); }, Status::bad_escape_counts);
  // Rule 16: out of order and past the (partial) last chunk's end.
  uint64_t first_multi = ~uint64_t{0}, idx = 0;
  for (uint64_t q = 0; q < L.n_chunks; ++q) {
    const uint16_t c = get16(&s.frame[L.count_off + 2 * q]);
    if (c >= 2 && first_multi == ~uint64_t{0}) first_multi = idx;
    idx += c;
  }
  ASSERT_NE(first_multi, ~uint64_t{0}) << "sample needs a chunk with two escapes";
  expect([&](auto& f) {
    std::swap(f[L.pos_off + 2 * first_multi], f[L.pos_off + 2 * first_multi + 2]);
    std::swap(f[L.pos_off + 2 * first_multi + 1], f[L.pos_off + 2 * first_multi + 3]);
  }, Status::bad_escape_position);
  expect([&](auto& f) {  // duplicate position
    f[L.pos_off + 2 * first_multi + 2] = f[L.pos_off + 2 * first_multi];
    f[L.pos_off + 2 * first_multi + 3] = f[L.pos_off + 2 * first_multi + 1];
  }, Status::bad_escape_position);
  {
    // The last escape: set its position to its chunk's length (one past the end).
    uint64_t q_last = 0;
    for (uint64_t q = 0; q < L.n_chunks; ++q)
      if (get16(&s.frame[L.count_off + 2 * q]) > 0) q_last = q;
    const uint64_t len = q_last + 1 < L.n_chunks ? 64 : s.n - 64 * q_last;
    expect([&](auto& f) { put16(&f[L.pos_off + 2 * (s.h.escape_count - 1)], static_cast<uint32_t>(len)); },
           Status::bad_escape_position);
    expect([&](auto& f) { put16(&f[L.pos_off + 2 * (s.h.escape_count - 1)], 0xFFFF); },
           Status::bad_escape_position);
  }
  // Rule 17: escape slot code non-zero; escape exponent in the codebook; >= 32.
  const uint64_t p0 = get16(&s.frame[L.pos_off]);
  uint64_t q0 = 0;
  while (get16(&s.frame[L.count_off + 2 * q0]) == 0) ++q0;
  const uint64_t i0 = 64 * q0 + p0;
  expect([&](auto& f) { f[L.code_off + i0 / 2] |= static_cast<uint8_t>(1u << (4 * (i0 & 1))); },
         Status::bad_escape_value);
  expect([&](auto& f) { f[L.exp_off] = s.h.codebook[3]; }, Status::bad_escape_value);
  if (geometry_of(static_cast<uint32_t>(d)).exp_bits == 5) expect([&](auto& f) { f[L.exp_off] = 32; }, Status::bad_escape_value);
  // Rule 18: a code >= codebook_count (shrink the codebook to 12 entries).
  expect([&](auto& f) {
    f[48] = 12;
    std::memset(&f[32 + 12], 0, 4);
    reseal(f);
  }, Status::bad_code);
  // Rule 19: a residual bit flipped (block 0), a block check flipped, the
  // combined checksum changed (every block check still matches).
  const uint64_t payload = L.res_size ? L.res_off : L.high_off;
  auto expect_block = [&](auto&& edit, uint64_t block) {
    std::vector<uint8_t> f = s.frame, out(s.input.size());
    edit(f);
    const Result r = decompress(f.data(), f.size(), out.data(), out.size());
    EXPECT_EQ(r.status, Status::checksum_mismatch);
    EXPECT_EQ(r.corrupt_block, block);
  };
  expect_block([&](auto& f) { f[payload] ^= 1; }, 0);
  expect_block([&](auto& f) { f[L.check_off + 3] ^= 0x40; }, 0);
  expect_block([&](auto& f) {
    f[60] ^= 1;
    reseal(f);
  }, ~uint64_t{0});
  std::vector<uint8_t> f = s.frame, out;
  f[payload] ^= 1;
  DecompressOptions no_verify;
  no_verify.verify_checksum = false;
  EXPECT_EQ(decode(f, s, &out, no_verify), Status::ok);
  EXPECT_NE(out, s.input);
}

TEST_P(Malformed, StoredFrameFaults) {
  const Sample s = stored_sample(GetParam());
  auto expect = [&](auto&& edit, Status want) {
    std::vector<uint8_t> f = s.frame;
    edit(f);
    reseal(f);
    EXPECT_EQ(decode(f, s), want) << status_name(want);
  };
  const uint64_t bytes = s.input.size();
  ASSERT_NE(bytes % 16, 0u);
  expect([&](auto& f) { f[64 + bytes] = 1; }, Status::bad_padding);
  expect([&](auto& f) { f[64 + align16(bytes) - 1] = 1; }, Status::bad_padding);  // last byte
  expect([](auto& f) { f[16] = 1; }, Status::bad_header);   // escape_count
  expect([](auto& f) { f[40] = 1; }, Status::bad_header);   // codebook entry
  expect([](auto& f) { f[48] = 1; }, Status::bad_header);   // codebook_count
  expect([](auto& f) { f[6] &= static_cast<uint8_t>(~kFlagStored); }, Status::bad_codebook);  // coded, count 0
  expect([&](auto& f) { f[64] ^= 4; }, Status::checksum_mismatch);
  expect([](auto& f) { put64(&f[24], get64(&f[24]) + 16); }, Status::size_mismatch);
  // Stream 7 after the padded data: its check and the zero gap after it.
  const uint64_t check_off = stored_check_off(static_cast<uint32_t>(s.dtype), s.n);
  ASSERT_EQ(s.frame.size(), check_off + 16);
  expect([&](auto& f) { f[check_off] ^= 1; }, Status::checksum_mismatch);
  expect([&](auto& f) { f[check_off + 4] = 1; }, Status::bad_padding);
  expect([&](auto& f) { f[check_off + 15] = 1; }, Status::bad_padding);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, Malformed, ::testing::ValuesIn(kDtypes),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

}  // namespace
}  // namespace splitzip

namespace splitzip {
namespace {

// The shared corpus (tests/support/malformed.h) against every backend here.
TEST(MalformedCorpus, EveryAvailableBackendGivesTheRequiredStatus) {
  for (size_t i = 0; i < backend_count(); ++i) {
    const char* name = backend_name(i);
    if (!backend_available(name) || !find_backend(name)->accepts(MemoryKind::host)) continue;
    EXPECT_TRUE(test::malformed_frames_rejected(name)) << name;
  }
}

TEST(MalformedCorpus, CoversEveryPayloadRule) {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    std::set<Status> seen;
    for (const auto& m : test::malformed_frames(d)) seen.insert(m.expected);
    for (int s = static_cast<int>(Status::truncated); s <= static_cast<int>(Status::checksum_mismatch); ++s)
      if (s != static_cast<int>(Status::limit_exceeded)) {
        EXPECT_TRUE(seen.count(static_cast<Status>(s))) << s;
      }
  }
}

}  // namespace
}  // namespace splitzip
