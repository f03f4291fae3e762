// SPDX-License-Identifier: Apache-2.0
// The dtype visitor and codec_of() (core/codec.h): every dtype id and mode
// byte maps as FORMAT.md says, the geometry table is the traits', and every
// (dtype, codec) pair codec_of() takes reaches a coded frame of that codec
// on every available backend of the registry (a backend whose dispatch
// missed a dtype would store the frame, fail, or write another layout).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backends/registry.h"
#include "core/codec.h"
#include "core/header.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {
namespace {

// Compile time: the pairs a codec takes, and the e4m3 rule.
static_assert(codec_of(Dtype::bf16, Mode::fast) == Codec::nibble);
static_assert(codec_of(Dtype::fp8_e5m2, Mode::capacity) == Codec::capacity);
static_assert(codec_of(Dtype::fp8_e4m3, Mode::fast) == Codec::e4m3);
static_assert(codec_of(Dtype::fp8_e4m3, Mode::capacity) == Codec::capacity);  // v3, FORMAT.md 4.6.7
// The capacity split: the dtype's own, but fp8_e4m3 codes the whole byte and has no residual.
static_assert(cap_geometry(Fp8E4M3Traits::kId).exp_bits == 8 && cap_geometry(Fp8E4M3Traits::kId).res_bytes == 0 &&
              cap_geometry(Fp8E4M3Traits::kId).res_high == 0 && cap_symbol_limit(Fp8E4M3Traits::kId) == 256);
static_assert(cap_symbol_limit(Fp8E5M2Traits::kId) == 32 && cap_symbol_limit(Bf16Traits::kId) == 256);
static_assert(cap_geometry(Fp16Traits::kId).res_high == 3 && cap_geometry(Fp32Traits::kId).res_bytes == 3);
static_assert(codec_of(0u, 0u) == Codec::invalid && codec_of(kDtypeCount + 1, 0u) == Codec::invalid);
static_assert(geometry_of(0).bytes == 0 && geometry_of(kDtypeCount + 1).bytes == 0);

constexpr uint32_t kModes[] = {static_cast<uint32_t>(Mode::fast), static_cast<uint32_t>(Mode::capacity)};

TEST(Codec, DtypeIdsAndVisitor) {
  for (uint32_t id = 0; id < 256; ++id) {
    uint32_t seen = 0;
    const bool visited = visit_dtype(id, [&](auto t) { seen = decltype(t)::kId; });
    EXPECT_EQ(visited, dtype_id_valid(id)) << id;
    EXPECT_EQ(visited, dtype_valid(static_cast<Dtype>(id))) << id;
    EXPECT_EQ(seen, visited ? id : 0u) << id;
    const DtypeGeometry g = geometry_of(id);
    EXPECT_EQ(g.bytes != 0, visited) << id;
    visit_dtype(id, [&](auto t) {
      using T = decltype(t);
      EXPECT_EQ(g.bytes, T::kBytes);
      EXPECT_EQ(g.bytes, sizeof(typename T::Bits));
      EXPECT_EQ(g.exp_bits, T::kExpBits);
      EXPECT_EQ(g.res_bytes, T::kResBytes);
      EXPECT_EQ(g.res_high, T::kResHighBits);
      EXPECT_EQ(dtype_bytes(static_cast<Dtype>(id)), T::kBytes);
      EXPECT_STREQ(dtype_name(static_cast<Dtype>(id)), T::kName);
      Dtype parsed = Dtype::bf16;
      EXPECT_TRUE(parse_dtype(T::kName, &parsed));
      EXPECT_EQ(static_cast<uint32_t>(parsed), id);
    });
  }
}

TEST(Codec, CodecOfEveryPair) {
  for (uint32_t id = 0; id < 256; ++id) {
    for (uint32_t mode = 0; mode < 256; ++mode) {
      const Codec c = codec_of(id, mode);
      Codec want = Codec::invalid;
      if (dtype_id_valid(id) && mode == 0) want = id == kDtypeE4M3 ? Codec::e4m3 : Codec::nibble;
      if (dtype_id_valid(id) && mode == 1) want = Codec::capacity;
      ASSERT_EQ(c, want) << id << " " << mode;
      if (c != Codec::invalid) {
        EXPECT_EQ(mode_of(c), mode);
        EXPECT_TRUE(codec_takes(c, id));
      }
    }
  }
  // Every dtype has a mode-0 codec; visit_codec_dtype visits exactly the pairs codec_of() takes.
  for (uint32_t id = 1; id <= kDtypeCount; ++id) {
    EXPECT_NE(codec_of(id, 0), Codec::invalid) << id;
    EXPECT_EQ(visit_codec_dtype<Codec::nibble>(id, [](auto) {}), codec_takes(Codec::nibble, id));
    EXPECT_EQ(visit_codec_dtype<Codec::e4m3>(id, [](auto) {}), codec_takes(Codec::e4m3, id));
    EXPECT_EQ(visit_codec_dtype<Codec::capacity>(id, [](auto) {}), codec_takes(Codec::capacity, id));
  }
}

// n elements with 3 distinct exponents and random residuals: every codec
// codes them below the stored size.
std::vector<uint8_t> compressible(uint32_t id, uint64_t n, uint32_t seed) {
  std::vector<uint8_t> out;
  std::mt19937 rng(seed);
  visit_dtype(id, [&](auto t) {
    using T = decltype(t);
    out.resize(n * T::kBytes);
    const uint32_t mid = (1u << T::kExpBits) / 2;
    for (uint64_t i = 0; i < n; ++i) {
      const auto e = static_cast<uint32_t>(mid - 1 + rng() % 3);
      const auto r = static_cast<uint32_t>(rng() & ((2u << T::kManBits) - 1));
      const typename T::Bits v = T::join(e, r);
      std::memcpy(out.data() + i * T::kBytes, &v, sizeof v);
    }
  });
  return out;
}

TEST(Codec, EveryPairReachesEveryBackend) {
  int checked = 0;
  for (size_t b = 0; b < registry_size(); ++b) {
    const Backend* be = registry_at(b);
    if (!be->available() || !be->accepts(MemoryKind::host)) continue;
    for (uint32_t id = 1; id <= kDtypeCount; ++id) {
      for (const uint32_t mode : kModes) {
        const Codec codec = codec_of(id, mode);
        for (const uint64_t n : {uint64_t{1000}, uint64_t{70000}}) {
          const std::vector<uint8_t> src = compressible(id, n, id * 131 + mode);
          CompressArgs a;
          a.dtype = static_cast<Dtype>(id);
          a.mode = static_cast<Mode>(mode);
          a.src = src.data();
          a.n = n;
          std::vector<uint8_t> frame(compress_bound(a.dtype, n));
          a.dst = frame.data();
          a.capacity = frame.size();
          const FrameOutcome o = be->compress_frame(a);
          SCOPED_TRACE(std::string(be->name()) + " dtype " + std::to_string(id) + " mode " + std::to_string(mode) +
                       " n " + std::to_string(n));
          if (codec == Codec::invalid) {  // a valid dtype and mode without a format: refused by name
            EXPECT_EQ(o.status, Status::undefined_mode);
            continue;
          }
          ASSERT_EQ(o.status, Status::ok);
          FrameHeader h;
          ASSERT_EQ(parse_header(frame.data(), o.frame_size, &h), Status::ok);
          EXPECT_FALSE(h.stored());
          EXPECT_EQ(h.dtype, id);
          EXPECT_EQ(codec_of(h.dtype, h.mode), codec);
          std::vector<uint8_t> back(src.size() + 1);
          DecompressArgs d;
          d.src = frame.data();
          d.src_size = o.frame_size;
          d.dst = back.data();
          d.capacity = back.size();
          const FrameOutcome r = be->decompress_frame(d);
          ASSERT_EQ(r.status, Status::ok);
          ASSERT_EQ(r.decoded_size, src.size());
          EXPECT_EQ(std::memcmp(back.data(), src.data(), src.size()), 0);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace splitzip
