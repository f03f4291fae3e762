// SPDX-License-Identifier: Apache-2.0
// compress never writes past compress_bound (or past a smaller capacity),
// and incompressible or escape-heavy input switches to stored mode exactly as
// FORMAT.md 4.4 says. Destinations end at an inaccessible page, so one byte
// too many faults the test. Every case runs on every available backend.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "guard_buffer.h"
#include "test_data.h"
#include "tests/fuzz/spec_oracle.h"

namespace szrel {
namespace {

using splitzip::Codebook;
using splitzip::CompressOptions;
using splitzip::Dtype;
using splitzip::Status;

struct Outcome {
  Status status = Status::internal_error;
  uint64_t size = 0;
  bool stored = false;
  uint64_t escapes = 0;
  std::vector<uint8_t> frame;
};

// Compresses into a guard buffer of `capacity` bytes and checks the promises
// that hold for any input: no write outside, size <= bound, round trip.
Outcome compress_guarded(Dtype d, const std::vector<uint8_t>& data, uint64_t capacity,
                         CompressOptions o) {
  const uint64_t n = data.size() / splitzip::dtype_bytes(d);
  GuardBuffer dst(capacity);
  Outcome out;
  if (!dst.valid()) {
    ADD_FAILURE() << "mmap failed";
    return out;
  }
  const void* src = data.empty() ? static_cast<const void*>(&out) : data.data();
  const splitzip::Result r = splitzip::compress(d, src, n, dst.data(), capacity, o);
  EXPECT_TRUE(dst.before_intact()) << "compress wrote before the destination";
  out.status = r.status;
  if (!r.ok()) return out;
  out.size = r.size;
  EXPECT_LE(r.size, capacity);
  EXPECT_LE(r.size, splitzip::compress_bound(d, n));
  out.frame.assign(dst.data(), dst.data() + r.size);
  splitzip::FrameInfo fi;
  EXPECT_EQ(splitzip::frame_info(out.frame.data(), out.frame.size(), &fi), Status::ok);
  out.stored = fi.stored;
  out.escapes = fi.escape_count;
  // The decoder reads only inside the frame: give it a guarded copy.
  GuardBuffer frame(out.frame.size());
  std::memcpy(frame.data(), out.frame.data(), out.frame.size());
  GuardBuffer back(data.size());
  const splitzip::Result d2 = splitzip::decompress(frame.data(), frame.size(), back.data(), data.size());
  EXPECT_EQ(d2.status, Status::ok);
  EXPECT_EQ(d2.size, data.size());
  EXPECT_TRUE(data.empty() || std::memcmp(back.data(), data.data(), data.size()) == 0) << "round trip";
  return out;
}

// What FORMAT.md 4.4 prescribes for this input and codebook.
struct Expected {
  bool stored;
  uint64_t escapes;
  uint64_t size;
};
Expected expected_frame(Dtype d, const std::vector<uint8_t>& data, const Codebook* user,
                        uint32_t chunk_log2) {
  const uint64_t n = data.size() / splitzip::dtype_bytes(d);
  const Codebook cb = user ? *user : szfuzz::spec_calibrate(d, data.data(), n);
  const uint64_t e = szfuzz::spec_escape_count(d, data.data(), n, cb);
  const uint32_t id = static_cast<uint32_t>(d);
  const uint64_t coded = szfuzz::spec_coded_size(id, n, chunk_log2, e);  // no checksum: no stream 7
  const uint64_t stored = szfuzz::spec_stored_size(id, n);
  if (n > 0 && coded < stored) return {false, e, coded};
  return {true, 0, stored};
}

class BoundedOutput : public ::testing::TestWithParam<std::string> {
 protected:
  CompressOptions opts(const Codebook* cb = nullptr) const {
    CompressOptions o;
    o.backend = GetParam().c_str();
    o.codebook = cb;
    o.checksum = false;  // the sizes below are of frames without block checks
    return o;
  }
  // Runs one input at capacity == compress_bound and checks the 4.4 choice.
  Outcome run(Dtype d, const std::vector<uint8_t>& data, const Codebook* cb = nullptr) {
    const uint64_t n = data.size() / splitzip::dtype_bytes(d);
    const Outcome got = compress_guarded(d, data, splitzip::compress_bound(d, n), opts(cb));
    EXPECT_EQ(got.status, Status::ok) << splitzip::status_name(got.status);
    const Expected want = expected_frame(d, data, cb, splitzip::kDefaultChunkLog2);
    EXPECT_EQ(got.stored, want.stored);
    EXPECT_EQ(got.escapes, want.escapes);
    EXPECT_EQ(got.size, want.size);
    return got;
  }
};

TEST_P(BoundedOutput, RandomBytesAreStored) {
  for (Dtype d : kAllDtypes) {
    for (uint64_t n : {0ull, 1ull, 2ull, 7ull, 63ull, 64ull, 1000ull, 4097ull, 100003ull}) {
      SCOPED_TRACE(std::string(splitzip::dtype_name(d)) + " n=" + std::to_string(n));
      const auto data = random_bytes(n * splitzip::dtype_bytes(d), n + 17);
      const Outcome o = run(d, data);
      // Uniform random exponents cannot beat the stored frame.
      if (n >= 1000) {
        EXPECT_TRUE(o.stored);
      }
    }
  }
}

TEST_P(BoundedOutput, AllEscapesAreStored) {
  for (Dtype d : kAllDtypes) {
    SCOPED_TRACE(splitzip::dtype_name(d));
    // Codebook {0..15}; data exponents 16..31: every element escapes.
    Codebook cb;
    cb.dtype = d;
    cb.count = 16;
    for (uint8_t c = 0; c < 16; ++c) cb.entries[c] = c;
    const auto data = make_values(d, 50000, 3, [](uint64_t i, Rng&) { return 16 + static_cast<uint32_t>(i % 16); });
    const Outcome o = run(d, data, &cb);
    EXPECT_TRUE(o.stored);
    // Dynamic calibration over 32 equally common exponents: half escape.
    const auto wide = make_values(d, 50000, 4, [](uint64_t i, Rng&) { return static_cast<uint32_t>(i % 32); });
    EXPECT_TRUE(run(d, wide).stored);
  }
}

TEST_P(BoundedOutput, ExponentsChangeMidBuffer) {
  for (Dtype d : kAllDtypes) {
    SCOPED_TRACE(splitzip::dtype_name(d));
    const uint32_t base = five_bit(d) ? 0 : 100;
    // First part draws from 16 exponents, the rest from 16 others.
    for (uint64_t switch_at : {25000ull, 45000ull, 49990ull}) {
      SCOPED_TRACE("switch at " + std::to_string(switch_at));
      const auto data = make_values(d, 50000, switch_at, [&](uint64_t i, Rng& r) {
        return base + static_cast<uint32_t>(r.next() % 16) + (i >= switch_at ? 16 : 0);
      });
      // A codebook calibrated on the first part only (a stale codebook).
      splitzip::Histogram h(d);
      h.add(data.data(), switch_at);
      const Codebook stale = h.codebook();
      run(d, data, &stale);
      run(d, data);  // dynamic top-16 over the whole buffer
    }
  }
}

// The 4.4 threshold, exactly: the largest escape count that still codes, and one more.
TEST_P(BoundedOutput, StoredThresholdIsExact) {
  for (Dtype d : kAllDtypes) {
    SCOPED_TRACE(splitzip::dtype_name(d));
    const uint64_t n = 20000;
    const uint32_t id = static_cast<uint32_t>(d);
    uint64_t e_max = 0;
    while (e_max < n && szfuzz::spec_coded_size(id, n, splitzip::kDefaultChunkLog2, e_max + 1) <
                            szfuzz::spec_stored_size(id, n))
      ++e_max;
    ASSERT_GT(e_max, 0u);
    Codebook cb;
    cb.dtype = d;
    cb.count = 1;
    cb.entries[0] = 3;
    for (uint64_t e : {e_max, e_max + 1}) {
      SCOPED_TRACE("E=" + std::to_string(e));
      // Escapes spread over the buffer; exponent 3 elsewhere.
      const uint64_t stride = n / e;
      const auto data = make_values(d, n, e, [&](uint64_t i, Rng&) {
        return (i % stride == 0 && i / stride < e) ? 4u : 3u;
      });
      ASSERT_EQ(szfuzz::spec_escape_count(d, data.data(), n, cb), e);
      const Outcome o = run(d, data, &cb);
      EXPECT_EQ(o.stored, e > e_max);
      // A destination of exactly the coded size is enough for the coded frame.
      if (!o.stored) {
        const Outcome exact = compress_guarded(d, data, o.size, opts(&cb));
        EXPECT_EQ(exact.status, Status::ok);
        EXPECT_EQ(exact.frame, o.frame);
      }
    }
  }
}

// Below the frame size: DST_TOO_SMALL, and nothing written past the capacity.
TEST_P(BoundedOutput, SmallCapacityIsRefused) {
  const Dtype d = Dtype::bf16;
  const auto data = make_values(d, 30000, 9, [](uint64_t, Rng& r) { return 120 + static_cast<uint32_t>(r.next() % 8); });
  const Outcome full = run(d, data);
  ASSERT_FALSE(full.stored);
  for (uint64_t cap : {uint64_t{0}, uint64_t{1}, uint64_t{63}, uint64_t{64}, full.size / 2, full.size - 16,
                       full.size - 1}) {
    SCOPED_TRACE("capacity " + std::to_string(cap));
    const Outcome o = compress_guarded(d, data, cap, opts());
    EXPECT_EQ(o.status, Status::dst_too_small) << splitzip::status_name(o.status);
  }
  // Random data needs the whole stored frame; one byte less is refused.
  // compress_bound is the stored frame WITH block checks (60000 bytes: one
  // block, 16 bytes of stream 7), so without a checksum it has 16 to spare.
  const auto rnd = random_bytes(2 * 30000, 5);
  const uint64_t bound = splitzip::compress_bound(d, 30000);
  const uint64_t stored = szfuzz::spec_stored_size(static_cast<uint32_t>(d), 30000);
  EXPECT_EQ(bound, stored + 16);
  EXPECT_EQ(compress_guarded(d, rnd, stored - 1, opts()).status, Status::dst_too_small);
  EXPECT_EQ(compress_guarded(d, rnd, stored, opts()).status, Status::ok);
  CompressOptions ck = opts();
  ck.checksum = true;
  EXPECT_EQ(compress_guarded(d, rnd, bound - 1, ck).status, Status::dst_too_small);
  EXPECT_EQ(compress_guarded(d, rnd, bound, ck).status, Status::ok);
}

INSTANTIATE_TEST_SUITE_P(Backends, BoundedOutput, ::testing::ValuesIn(available_backends()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace szrel
