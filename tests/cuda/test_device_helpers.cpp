// SPDX-License-Identifier: Apache-2.0
// core/device_helpers.h (the GPU's header, hash, budget and calibration
// code) against the host implementations in core/, on the CPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backends/registry.h"
#include "core/device_helpers.h"
#include "core/header.h"
#include "core/synthetic.h"
#include "cuda/plan.h"

namespace splitzip {
namespace {

TEST(DeviceHelpers, Xxh64MatchesCoreForEveryTailLength) {
  const std::vector<uint8_t> data = synth::generate(synth::Generator::random_bits, Dtype::fp8_e5m2, 4099, 11);
  for (uint64_t len = 0; len <= 300; ++len) {
    ASSERT_EQ(hd::xxh64(data.data(), len), xxh64(data.data(), len)) << "len " << len;
    // Odd start: the device reads bytes, never assumes alignment.
    ASSERT_EQ(hd::xxh64(data.data() + 3, len), xxh64(data.data() + 3, len)) << "len " << len;
  }
  EXPECT_EQ(hd::xxh64(data.data(), data.size()), xxh64(data.data(), data.size()));
}

TEST(DeviceHelpers, Xxh64LanesCombineToTheHash) {
  // The GPU runs one thread per lane and joins them like this.
  const std::vector<uint8_t> data = synth::generate(synth::Generator::random_bits, Dtype::bf16, 1000, 3);
  for (uint64_t len : {32u, 33u, 64u, 95u, 1999u, 2000u}) {
    uint64_t v[4];
    for (uint32_t l = 0; l < 4; ++l) v[l] = hd::xxh_lane(data.data(), len, l, 0);
    const uint64_t h = hd::xxh_finish(hd::xxh_combine(v), data.data() + (len & ~uint64_t{31}), len);
    EXPECT_EQ(h, xxh64(data.data(), len)) << len;
  }
}

FrameHeader sample_header(uint64_t seed) {
  FrameHeader h;
  const uint64_t r = synth::random_u64(seed, 0);
  h.dtype = static_cast<uint8_t>(1 + r % 4);
  h.chunk_log2 = static_cast<uint8_t>(6 + (r >> 8) % 10);
  h.n_elems = synth::random_u64(seed, 1) % 100000;
  const bool stored = (r >> 16) & 1;
  const bool checksum = (r >> 17) & 1;
  h.flags = static_cast<uint8_t>((stored ? kFlagStored : 0) | (checksum ? kFlagChecksum : 0));
  if (!stored) {
    h.escape_count = h.n_elems ? synth::random_u64(seed, 2) % (h.n_elems / 8 + 1) : 0;
    h.codebook_count = static_cast<uint8_t>(1 + (r >> 20) % 16);
    for (uint32_t i = 0; i < h.codebook_count; ++i) h.codebook[i] = static_cast<uint8_t>(i * 2 + 1);
    h.frame_size = coded_layout(h.dtype, h.n_elems, h.chunk_log2, h.escape_count).frame_size;
  } else {
    h.frame_size = stored_frame_size(h.dtype, h.n_elems);
  }
  h.content_checksum = checksum ? synth::random_u64(seed, 3) : 0;
  return h;
}

TEST(DeviceHelpers, WriteHeaderMatchesCore) {
  for (uint64_t seed = 0; seed < 500; ++seed) {
    const FrameHeader h = sample_header(seed);
    uint8_t a[64], b[64];
    write_header(h, a);
    hd::write_header(h, b);
    ASSERT_EQ(std::memcmp(a, b, 64), 0) << "seed " << seed;
  }
}

// Every single-byte change of a valid header, and random multi-byte noise:
// the device parser must return the core parser's status and fields.
TEST(DeviceHelpers, ParseHeaderMatchesCoreOnCorruptHeaders) {
  uint64_t checked = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const FrameHeader h = sample_header(seed);
    uint8_t good[64];
    write_header(h, good);
    for (uint32_t pos = 0; pos < 64; ++pos) {
      for (uint32_t v : {0u, 1u, 0x80u, 0xFFu, good[pos] ^ 1u}) {
        uint8_t b[64];
        std::memcpy(b, good, 64);
        b[pos] = static_cast<uint8_t>(v);
        // Half the time repair header_check so the later rules are reached.
        if ((pos + v) & 1) {
          std::memset(b + 52, 0, 4);
          const auto c = static_cast<uint32_t>(xxh64(b, 64));
          for (int i = 0; i < 4; ++i) b[52 + i] = static_cast<uint8_t>(c >> (8 * i));
        }
        for (uint64_t avail : {uint64_t{63}, uint64_t{64}, h.frame_size, h.frame_size + 100}) {
          FrameHeader x, y;
          const Status sc = parse_header(b, avail, &x);
          const Status sd = hd::parse_header(b, avail, &y);
          ASSERT_EQ(sc, sd) << "seed " << seed << " pos " << pos << " value " << v << " avail " << avail;
          if (sc == Status::ok) {
            ASSERT_EQ(x.n_elems, y.n_elems);
            ASSERT_EQ(x.frame_size, y.frame_size);
            ASSERT_EQ(x.escape_count, y.escape_count);
            ASSERT_EQ(std::memcmp(x.codebook, y.codebook, 16), 0);
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 10000u);
}

TEST(DeviceHelpers, EscapeBudgetMatchesMaxEscapes) {
  for (uint32_t dtype = 1; dtype <= 4; ++dtype) {
    for (uint32_t cl : {6u, 10u, 15u}) {
      for (uint64_t n = 0; n < 3000; n += (n < 200 ? 1 : 37)) {
        const uint64_t stored = stored_frame_size(dtype, n);
        for (uint64_t cap : {stored, stored - 16, stored / 2, stored + 1000}) {
          ASSERT_EQ(hd::escape_budget(dtype, n, cl, cap), max_escapes(dtype, n, cl, cap))
              << "dtype " << dtype << " n " << n << " chunk_log2 " << cl << " cap " << cap;
        }
      }
      for (uint64_t n : {uint64_t{1} << 20, (uint64_t{1} << 28) + 12345, uint64_t{1} << 40}) {
        const uint64_t stored = stored_frame_size(dtype, n);
        ASSERT_EQ(hd::escape_budget(dtype, n, cl, stored), max_escapes(dtype, n, cl, stored));
      }
    }
  }
}

// The staging bound used to size workspaces must cover every budget.
TEST(DeviceHelpers, EscapeBudgetBoundCoversTheBudget) {
  for (uint32_t dtype = 1; dtype <= 4; ++dtype) {
    for (uint32_t cl = 6; cl <= 15; ++cl) {
      for (uint64_t n = 1; n < 5000; n += (n < 300 ? 1 : 61)) {
        const uint64_t b = hd::escape_budget(dtype, n, cl, ~uint64_t{0});
        if (b == kNoEscapeBudget) continue;
        ASSERT_LE(b, hd::escape_budget_bound(dtype, n)) << dtype << " " << n << " " << cl;
      }
      const uint64_t big = (uint64_t{1} << 30) + 7;
      ASSERT_LE(hd::escape_budget(dtype, big, cl, ~uint64_t{0}), hd::escape_budget_bound(dtype, big));
    }
  }
}

TEST(DeviceHelpers, CheckCodebookMatchesValidateCodebook) {
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    Codebook cb;
    cb.dtype = static_cast<Dtype>(1 + seed % 4);
    cb.count = static_cast<uint8_t>(synth::random_u64(seed, 0) % 18);
    for (int i = 0; i < 16; ++i) {
      const uint64_t r = synth::random_u64(seed, 1 + i);
      cb.entries[i] = static_cast<uint8_t>(i < cb.count ? (r % 3 == 0 ? r % 40 : i * 3) : (r % 50 == 0 ? 1 : 0));
    }
    const Status want = validate_codebook(cb);
    EXPECT_EQ(hd::check_codebook(static_cast<uint32_t>(cb.dtype), cb.entries, cb.count), want) << seed;
  }
}

TEST(DeviceHelpers, Top16MatchesHistogramCodebook) {
  for (uint64_t seed = 0; seed < 400; ++seed) {
    uint64_t counts[256] = {};
    const uint64_t used = 1 + synth::random_u64(seed, 0) % 40;
    for (uint64_t k = 0; k < used; ++k) {
      const uint64_t e = synth::random_u64(seed, 10 + k) % (seed % 2 ? 32 : 256);
      counts[e] += 1 + synth::random_u64(seed, 100 + k) % 5;  // many ties
    }
    const Dtype d = seed % 2 ? Dtype::fp16 : Dtype::bf16;
    Histogram h(d);
    h.add_counts(counts);
    const Codebook want = h.codebook();
    Codebook got;
    hd::top16_codebook(counts, static_cast<uint32_t>(d), &got);
    ASSERT_EQ(got.count, want.count) << seed;
    ASSERT_EQ(std::memcmp(got.entries, want.entries, 16), 0) << seed;
    EXPECT_EQ(got.dtype, want.dtype);
  }
}

TEST(DeviceHelpers, WorkspaceLayoutsAreOrderedAndAligned) {
  using namespace cuda_detail;
  for (uint64_t total : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 20, (uint64_t{1} << 28) + 3}) {
    for (uint64_t count : {1u, 7u, 1000u}) {
      const WorkspaceLayout e = encode_workspace(1, total, count);
      EXPECT_EQ(e.plans_off % 256, 0u);
      EXPECT_GE(e.states_off, e.plans_off + count * sizeof(EncPlan));
      EXPECT_GE(e.stage_off, e.states_off + e.tiles_bound * 8);
      EXPECT_GE(e.total, e.stage_off + e.stage_bytes);
      const WorkspaceLayout d = decode_workspace(total * 2, count);
      EXPECT_GE(d.ord_off, d.plans_off + count * sizeof(DecPlan));
      EXPECT_GE(d.states_off, d.ord_off + count * 8);
      EXPECT_GE(d.total, d.states_off + d.tiles_bound * 8);
    }
  }
}

}  // namespace
}  // namespace splitzip
