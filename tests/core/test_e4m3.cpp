// SPDX-License-Identifier: Apache-2.0
// fp8_e4m3 (FORMAT.md 4.7): round trips of every byte value, byte identity of
// every compiled backend with the reference, the malformed-frame statuses and
// the codebook limit of 7.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/header.h"
#include "core/layout.h"
#include "splitzip/splitzip.hpp"

namespace sz = splitzip;

namespace {

std::vector<const char*> backends() {
  std::vector<const char*> out;
  for (size_t i = 0; i < sz::backend_count(); ++i) {
    const char* b = sz::backend_name(i);
    if (sz::backend_available(b) && std::string(b) != "cuda") out.push_back(b);
  }
  return out;
}

std::vector<uint8_t> compress(const std::vector<uint8_t>& v, const char* backend, bool checksum,
                              const sz::Codebook* cb = nullptr) {
  std::vector<uint8_t> f(sz::compress_bound(sz::Dtype::fp8_e4m3, v.size()));
  sz::CompressOptions o;
  o.backend = backend;
  o.checksum = checksum;
  o.codebook = cb;
  const sz::Result r = sz::compress(sz::Dtype::fp8_e4m3, v.data(), v.size(), f.data(), f.size(), o);
  EXPECT_EQ(r.status, sz::Status::ok) << backend;
  f.resize(r.size);
  return f;
}

sz::Status decode(const std::vector<uint8_t>& f, const char* backend, std::vector<uint8_t>* out) {
  sz::FrameInfo fi;
  if (sz::frame_info(f.data(), f.size(), &fi) == sz::Status::ok) out->assign(fi.decoded_size, 0xAB);
  sz::DecompressOptions o;
  o.backend = backend;
  return sz::decompress(f.data(), f.size(), out->data(), out->size(), o).status;
}

// KV-like E4M3: exponents concentrated around 7 with a tail, random sign/mantissa.
std::vector<uint8_t> kv_like(size_t n, uint32_t seed, double spread) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(7.0, spread);
  std::vector<uint8_t> v(n);
  for (auto& x : v) {
    int e = static_cast<int>(g(rng) + 0.5);
    e = e < 0 ? 0 : e > 15 ? 15 : e;
    x = static_cast<uint8_t>((rng() & 0x80u) | (static_cast<uint32_t>(e) << 3) | (rng() & 7u));
  }
  return v;
}

TEST(E4M3, DtypeNames) {
  sz::Dtype d;
  EXPECT_TRUE(sz::parse_dtype("fp8_e4m3", &d));
  EXPECT_EQ(d, sz::Dtype::fp8_e4m3);
  EXPECT_FALSE(sz::parse_dtype("fp8", &d));
  EXPECT_STREQ(sz::dtype_name(sz::Dtype::fp8_e4m3), "fp8_e4m3");
  EXPECT_EQ(sz::dtype_bytes(sz::Dtype::fp8_e4m3), 1u);
}

TEST(E4M3, EveryByteValueRoundTripsOnEveryBackend) {
  std::vector<uint8_t> v;
  for (int rep = 0; rep < 37; ++rep)
    for (int b = 0; b < 256; ++b) v.push_back(static_cast<uint8_t>(b));
  // Mostly one exponent so the frame is coded, with every byte value present.
  const auto kv = kv_like(100000, 5, 0.7);
  v.insert(v.end(), kv.begin(), kv.end());
  const auto ref = compress(v, "reference", true);
  sz::FrameInfo fi;
  ASSERT_EQ(sz::frame_info(ref.data(), ref.size(), &fi), sz::Status::ok);
  EXPECT_FALSE(fi.stored);
  EXPECT_LE(fi.codebook.count, 7u);
  for (const char* b : backends()) {
    EXPECT_EQ(compress(v, b, true), ref) << b;
    std::vector<uint8_t> out;
    ASSERT_EQ(decode(ref, b, &out), sz::Status::ok) << b;
    EXPECT_EQ(out, v) << b;  // NaN 0x7F/0xFF, +-0, subnormals: every byte value
  }
}

TEST(E4M3, SizesCodebooksAndStoredFallback) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{15}, size_t{1000}, size_t{65536},
                   size_t{65537}, size_t{200003}}) {
    for (double spread : {0.3, 1.0, 5.0}) {
      const auto v = kv_like(n, static_cast<uint32_t>(n * 7 + 1), spread);
      for (bool checksum : {false, true}) {
        const auto ref = compress(v, "reference", checksum);
        for (const char* b : backends()) {
          EXPECT_EQ(compress(v, b, checksum), ref) << b << " n=" << n << " spread=" << spread;
          std::vector<uint8_t> out;
          ASSERT_EQ(decode(ref, b, &out), sz::Status::ok) << b << " n=" << n;
          EXPECT_EQ(out, v);
        }
      }
    }
  }
  // User codebooks of 1..7 entries; 8 entries are refused.
  const auto v = kv_like(5000, 3, 1.0);
  for (uint8_t count = 1; count <= 8; ++count) {
    sz::Codebook cb;
    cb.dtype = sz::Dtype::fp8_e4m3;
    cb.count = count;
    for (uint8_t c = 0; c < count; ++c) cb.entries[c] = static_cast<uint8_t>(4 + c);
    if (count == 8) {
      EXPECT_EQ(sz::validate_codebook(cb), sz::Status::bad_codebook);
      continue;
    }
    const auto ref = compress(v, "reference", false, &cb);
    for (const char* b : backends()) EXPECT_EQ(compress(v, b, false, &cb), ref) << b;
  }
  sz::Codebook big;
  big.dtype = sz::Dtype::fp8_e4m3;
  big.count = 2;
  big.entries[0] = 3;
  big.entries[1] = 16;  // exponents are 4 bits
  EXPECT_EQ(sz::validate_codebook(big), sz::Status::bad_codebook);
}

TEST(E4M3, RatioOnConcentratedExponents) {
  // One exponent dominant (96%), the rest escapes: 7 bits + 4 per escape.
  const auto v = kv_like(1 << 20, 11, 0.9);
  const auto f = compress(v, "reference", false);
  const double ratio = static_cast<double>(v.size()) / static_cast<double>(f.size());
  EXPECT_GT(ratio, 1.10);
  EXPECT_LT(ratio, 8.0 / 7.0);
}

TEST(E4M3, MalformedFramesGiveTheSameStatusOnEveryBackend) {
  const auto v = kv_like(10001, 9, 1.2);
  sz::Codebook cb;  // 3 entries: codes 3..6 are unused
  cb.dtype = sz::Dtype::fp8_e4m3;
  cb.count = 3;
  cb.entries[0] = 7;
  cb.entries[1] = 6;
  cb.entries[2] = 8;
  const auto good = compress(v, "reference", false, &cb);
  sz::FrameHeader h;
  ASSERT_EQ(sz::parse_header(good.data(), good.size(), &h), sz::Status::ok);
  ASSERT_GT(h.escape_count, 0u);
  ASSERT_LT(h.codebook_count, 7u) << "test needs an unused code";
  const sz::FrameLayout L = sz::layout_of(h);
  auto code_at = [&](const std::vector<uint8_t>& f, uint64_t i) {
    const uint64_t bit = 3 * i;
    const uint32_t w = f[L.code_off + bit / 8] | (bit / 8 + 1 < L.code_size ? f[L.code_off + bit / 8 + 1] << 8 : 0);
    return (w >> (bit % 8)) & 7u;
  };
  auto set_code = [&](std::vector<uint8_t>& f, uint64_t i, uint32_t c) {
    for (uint32_t b = 0; b < 3; ++b) {
      const uint64_t bit = 3 * i + b;
      auto& byte = f[L.code_off + bit / 8];
      byte = static_cast<uint8_t>((byte & ~(1u << (bit % 8))) | (((c >> b) & 1u) << (bit % 8)));
    }
  };
  uint64_t plain = 0;
  while (code_at(good, plain) == 7) ++plain;
  struct Case {
    const char* what;
    sz::Status want;
    std::vector<uint8_t> f;
  };
  std::vector<Case> cases;
  {
    auto f = good;  // a code naming no entry
    set_code(f, plain, h.codebook_count);
    cases.push_back({"bad code", sz::Status::bad_code, f});
  }
  {
    auto f = good;  // one marker more than escape_count
    set_code(f, plain, 7);
    cases.push_back({"extra marker", sz::Status::bad_escape_counts, f});
  }
  {
    auto f = good;  // an escape exponent that is in the codebook
    f[L.exp_off] = static_cast<uint8_t>((f[L.exp_off] & 0xF0u) | h.codebook[0]);
    cases.push_back({"escape in codebook", sz::Status::bad_escape_value, f});
  }
  {
    auto f = good;  // n odd: the last residual byte's high nibble is padding
    f[L.res_off + L.res_size - 1] |= 0x80;
    cases.push_back({"residual padding", sz::Status::bad_padding, f});
  }
  {
    auto f = good;  // unused high bits of the last code byte
    f[L.code_off + L.code_size - 1] |= 0x80;
    cases.push_back({"code padding", sz::Status::bad_padding, f});
  }
  for (const auto& c : cases) {
    for (const char* b : backends()) {
      std::vector<uint8_t> out;
      EXPECT_EQ(decode(c.f, b, &out), c.want) << c.what << " on " << b;
    }
  }
}

// The capacity mode codes fp8_e4m3 (FORMAT.md 4.6.7, format v3): every
// backend writes the same v3 frame and it round-trips.
TEST(E4M3, CapacityModeOnEveryBackend) {
  const auto v = kv_like(70000, 1, 1.0);
  std::vector<uint8_t> want;
  for (size_t i = 0; i < sz::backend_count(); ++i) {
    const char* b = sz::backend_name(i);
    if (!sz::backend_available(b)) continue;
    SCOPED_TRACE(b);
    std::vector<uint8_t> f(sz::compress_bound(sz::Dtype::fp8_e4m3, v.size()));
    sz::CompressOptions o;
    o.mode = sz::Mode::capacity;
    o.backend = b;
    const sz::Result r = sz::compress(sz::Dtype::fp8_e4m3, v.data(), v.size(), f.data(), f.size(), o);
    if (r.status == sz::Status::unsupported_memory || r.status == sz::Status::backend_unavailable) continue;
    ASSERT_EQ(r.status, sz::Status::ok);
    f.resize(r.size);
    EXPECT_EQ(f[4], 3);  // version 3: a v3 feature
    EXPECT_EQ(f[49], 1);  // mode 1
    if (want.empty()) want = f;
    EXPECT_EQ(f, want);
    std::vector<uint8_t> out(v.size());
    sz::DecompressOptions d;
    d.backend = b;
    const sz::Result r2 = sz::decompress(f.data(), f.size(), out.data(), out.size(), d);
    ASSERT_EQ(r2.status, sz::Status::ok);
    EXPECT_EQ(0, std::memcmp(out.data(), v.data(), v.size()));
  }
  EXPECT_FALSE(want.empty());
}

}  // namespace
