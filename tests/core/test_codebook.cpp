// SPDX-License-Identifier: Apache-2.0
// Codebook rules, deterministic top-16, calibration and the .szcb file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype_traits.h"
#include "core/header.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

std::vector<uint16_t> bf16_with_exponents(const std::vector<std::pair<uint32_t, int>>& spec) {
  std::vector<uint16_t> v;
  for (auto [e, count] : spec)
    for (int i = 0; i < count; ++i) v.push_back(Bf16Traits::join(e, static_cast<uint32_t>(i) & 0xFF));
  return v;
}

TEST(Codebook, TopSixteenByCountThenExponent) {
  // 20 exponents: counts 20..1; ties between 3 and 200 (both 5).
  std::vector<std::pair<uint32_t, int>> spec;
  for (uint32_t k = 0; k < 20; ++k) spec.push_back({100 + k, 20 - static_cast<int>(k)});
  spec.push_back({3, 5});
  spec.push_back({200, 5});
  const auto v = bf16_with_exponents(spec);
  Histogram h(Dtype::bf16);
  h.add(v.data(), v.size());
  EXPECT_EQ(h.total(), v.size());
  EXPECT_EQ(h.count(100), 20u);
  const Codebook cb = h.codebook();
  ASSERT_EQ(cb.count, 16);
  for (uint32_t k = 0; k < 15; ++k) EXPECT_EQ(cb.entries[k], 100 + k) << k;
  // Count 5: exponents 3, 115 and 200 tie; smallest exponent wins.
  EXPECT_EQ(cb.entries[15], 3);
  EXPECT_EQ(validate_codebook(cb), Status::ok);
}

// top16_codebook against FORMAT.md 3 written as a sort: many ties, few
// and many distinct values, counts spanning 64 bits.
TEST(Codebook, TopSixteenMatchesSortedRule) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 3000; ++round) {
    uint64_t counts[256] = {};
    const int distinct = static_cast<int>(rng() % 40);
    const uint64_t span = round % 3 == 0 ? 4 : round % 3 == 1 ? 1000 : ~uint64_t{0};
    for (int i = 0; i < distinct; ++i) counts[rng() % 256] = 1 + rng() % span;
    std::vector<uint32_t> order;
    for (uint32_t e = 0; e < 256; ++e)
      if (counts[e] != 0) order.push_back(e);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return counts[a] > counts[b]; });
    uint8_t want[16] = {};
    const uint32_t k = static_cast<uint32_t>(std::min<size_t>(16, order.size()));
    for (uint32_t i = 0; i < k; ++i) want[i] = static_cast<uint8_t>(order[i]);
    uint8_t got[16];
    std::memset(got, 0xAB, sizeof got);
    ASSERT_EQ(top16_codebook(counts, got), k) << round;
    ASSERT_EQ(0, std::memcmp(got, want, 16)) << round;
  }
}

TEST(Codebook, FewerThanSixteenValues) {
  const auto v = bf16_with_exponents({{7, 2}, {9, 5}, {8, 2}});
  Histogram h(Dtype::bf16);
  h.add(v.data(), v.size());
  const Codebook cb = h.codebook();
  ASSERT_EQ(cb.count, 3);
  EXPECT_EQ(cb.entries[0], 9);
  EXPECT_EQ(cb.entries[1], 7);
  EXPECT_EQ(cb.entries[2], 8);
  for (int i = 3; i < 16; ++i) EXPECT_EQ(cb.entries[i], 0);
}

TEST(Codebook, CalibrationPoolsBuffers) {
  const auto a = bf16_with_exponents({{1, 10}, {2, 1}});
  const auto b = bf16_with_exponents({{2, 20}, {3, 4}});
  const void* bufs[] = {a.data(), b.data()};
  const uint64_t ns[] = {a.size(), b.size()};
  Codebook cb;
  ASSERT_EQ(calibrate(Dtype::bf16, bufs, ns, 2, &cb), Status::ok);
  ASSERT_EQ(cb.count, 3);
  EXPECT_EQ(cb.entries[0], 2);  // 21 in total beats 10
  EXPECT_EQ(cb.entries[1], 1);
  EXPECT_EQ(cb.entries[2], 3);
  // Same as one histogram over the concatenation.
  std::vector<uint16_t> both(a);
  both.insert(both.end(), b.begin(), b.end());
  Histogram h(Dtype::bf16);
  h.add(both.data(), both.size());
  EXPECT_EQ(std::memcmp(h.codebook().entries, cb.entries, 16), 0);
  // Histogram::add_counts pools raw counts the same way.
  uint64_t counts[256] = {};
  counts[5] = 3;
  Histogram h2(Dtype::bf16);
  h2.add_counts(counts);
  EXPECT_EQ(h2.total(), 3u);
  EXPECT_EQ(h2.codebook().entries[0], 5);
}

TEST(Codebook, CalibrationArguments) {
  Codebook cb;
  const uint16_t x = 0x3F80;
  const void* bufs[] = {&x};
  const uint64_t ns[] = {1};
  EXPECT_EQ(calibrate(Dtype::bf16, bufs, ns, 1, nullptr), Status::invalid_argument);
  EXPECT_EQ(calibrate(static_cast<Dtype>(0), bufs, ns, 1, &cb), Status::invalid_argument);
  EXPECT_EQ(calibrate(Dtype::bf16, nullptr, ns, 1, &cb), Status::invalid_argument);
  EXPECT_EQ(calibrate(Dtype::bf16, bufs, ns, 0, &cb), Status::invalid_argument);  // no data
  const void* nullbuf[] = {nullptr};
  EXPECT_EQ(calibrate(Dtype::bf16, nullbuf, ns, 1, &cb), Status::invalid_argument);
  ASSERT_EQ(calibrate(Dtype::bf16, bufs, ns, 1, &cb), Status::ok);
  EXPECT_EQ(cb.count, 1);
  EXPECT_EQ(cb.entries[0], 127);
}

TEST(Codebook, ValidationRules) {
  Codebook cb;
  cb.dtype = Dtype::fp16;
  EXPECT_EQ(validate_codebook(cb), Status::bad_codebook);  // count 0
  cb.count = 2;
  cb.entries[0] = 3;
  cb.entries[1] = 31;
  EXPECT_EQ(validate_codebook(cb), Status::ok);
  cb.entries[1] = 32;  // >= 32 for a 5-bit dtype
  EXPECT_EQ(validate_codebook(cb), Status::bad_codebook);
  cb.dtype = Dtype::bf16;
  EXPECT_EQ(validate_codebook(cb), Status::ok);
  cb.entries[1] = 3;  // duplicate
  EXPECT_EQ(validate_codebook(cb), Status::bad_codebook);
  cb.entries[1] = 4;
  cb.entries[5] = 1;  // non-zero past count
  EXPECT_EQ(validate_codebook(cb), Status::bad_codebook);
  cb.entries[5] = 0;
  cb.count = 17;
  EXPECT_EQ(validate_codebook(cb), Status::bad_codebook);
  cb.count = 2;
  cb.dtype = static_cast<Dtype>(7);
  EXPECT_EQ(validate_codebook(cb), Status::bad_codebook);
  // A zero entry inside count is a legal exponent (denormals).
  cb.dtype = Dtype::bf16;
  cb.entries[0] = 0;
  EXPECT_EQ(validate_codebook(cb), Status::ok);
}

Codebook sample_codebook() {
  Codebook cb;
  cb.dtype = Dtype::fp8_e5m2;
  cb.count = 4;
  cb.entries[0] = 15;
  cb.entries[1] = 14;
  cb.entries[2] = 0;
  cb.entries[3] = 31;
  return cb;
}

TEST(CodebookFile, SerializeLayout) {
  uint8_t b[kCodebookFileSize];
  ASSERT_EQ(codebook_serialize(sample_codebook(), b), Status::ok);
  EXPECT_EQ(std::memcmp(b, "SZCB", 4), 0);
  EXPECT_EQ(b[4], 1);
  EXPECT_EQ(b[5], 4);
  EXPECT_EQ(b[6], 4);
  EXPECT_EQ(b[7], 0);
  EXPECT_EQ(b[8], 15);
  EXPECT_EQ(b[11], 31);
  for (int i = 12; i < 28; ++i) EXPECT_EQ(b[i], 0) << i;
  const uint32_t check = b[28] | (b[29] << 8) | (b[30] << 16) | (uint32_t{b[31]} << 24);
  EXPECT_EQ(check, static_cast<uint32_t>(xxh64(b, 28)));
  Codebook out;
  ASSERT_EQ(codebook_deserialize(b, sizeof b, &out), Status::ok);
  EXPECT_EQ(out.dtype, Dtype::fp8_e5m2);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(std::memcmp(out.entries, sample_codebook().entries, 16), 0);
  Codebook bad;
  EXPECT_EQ(codebook_serialize(bad, b), Status::bad_codebook);
}

// Re-seals a modified file so the hash check passes and the later rules run.
void reseal(uint8_t b[32]) {
  const auto h = static_cast<uint32_t>(xxh64(b, 28));
  for (int i = 0; i < 4; ++i) b[28 + i] = static_cast<uint8_t>(h >> (8 * i));
}

TEST(CodebookFile, RejectsEachFault) {
  uint8_t good[kCodebookFileSize];
  ASSERT_EQ(codebook_serialize(sample_codebook(), good), Status::ok);
  Codebook out;
  uint8_t b[kCodebookFileSize];
  EXPECT_EQ(codebook_deserialize(good, 31, &out), Status::truncated);
  std::memcpy(b, good, 32); b[0] ^= 1;
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::bad_magic);
  std::memcpy(b, good, 32); b[4] = 2;
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::unsupported_version);
  std::memcpy(b, good, 32); b[9] ^= 1;
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::header_corrupt);
  std::memcpy(b, good, 32); b[5] = 0; reseal(b);
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::bad_dtype);
  std::memcpy(b, good, 32); b[7] = 1; reseal(b);
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::reserved_bits);
  std::memcpy(b, good, 32); b[26] = 1; reseal(b);
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::reserved_bits);
  std::memcpy(b, good, 32); b[9] = 15; reseal(b);  // duplicate
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::bad_codebook);
  std::memcpy(b, good, 32); b[8] = 40; reseal(b);  // >= 32 for fp8
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::bad_codebook);
  std::memcpy(b, good, 32); b[6] = 0; reseal(b);
  EXPECT_EQ(codebook_deserialize(b, 32, &out), Status::bad_codebook);
  // Every single-bit flip is rejected.
  for (int bit = 0; bit < 256; ++bit) {
    std::memcpy(b, good, 32);
    b[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(codebook_deserialize(b, 32, &out), Status::ok) << bit;
  }
}

TEST(CodebookFile, SaveLoad) {
  const std::string path = ::testing::TempDir() + "/splitzip_cb_test.szcb";
  ASSERT_EQ(codebook_save(sample_codebook(), path.c_str()), Status::ok);
  Codebook out;
  ASSERT_EQ(codebook_load(path.c_str(), &out), Status::ok);
  EXPECT_EQ(out.count, 4);
  EXPECT_EQ(out.entries[3], 31);
  // Longer files are not codebook files.
  auto bytes = test::read_file(path);
  bytes.push_back(0);
  ASSERT_TRUE(test::write_file(path, bytes));
  EXPECT_EQ(codebook_load(path.c_str(), &out), Status::size_mismatch);
  bytes.resize(10);
  ASSERT_TRUE(test::write_file(path, bytes));
  EXPECT_EQ(codebook_load(path.c_str(), &out), Status::truncated);
  std::remove(path.c_str());
  EXPECT_EQ(codebook_load(path.c_str(), &out), Status::io_error);
  EXPECT_EQ(codebook_save(sample_codebook(), "/nonexistent-dir/x.szcb"), Status::io_error);
  EXPECT_EQ(codebook_save(Codebook{}, path.c_str()), Status::bad_codebook);
  EXPECT_EQ(codebook_load(nullptr, &out), Status::invalid_argument);
}

}  // namespace
}  // namespace splitzip
