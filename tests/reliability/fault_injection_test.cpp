// SPDX-License-Identifier: Apache-2.0
// Deterministic fault injection: the bytes of small valid frames (each
// dtype, coded with escapes over several chunks, with and without checksum,
// and stored) is corrupted in several ways, and every prefix is tried. Each
// corrupted frame goes to every available backend with one and two threads.
// The answer must be one FORMAT.md section 9 allows for that frame (the spec
// oracle's verdict), the exact lowest rule from the reference, the same
// accept/reject everywhere, and on acceptance the oracle's output.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/layout.h"
#include "test_data.h"
#include "tests/fuzz/spec_oracle.h"

namespace szrel {
namespace {

using splitzip::Dtype;
using splitzip::Status;

struct Totals {
  uint64_t faults = 0, decodes = 0, rejected = 0;
};

// n and the escape period are chosen so the coded frame beats the stored
// one (5-bit dtypes save one bit per element at best, so they need more).
std::vector<uint8_t> frame_of(Dtype d, bool checksum, bool stored) {
  const uint32_t base = five_bit(d) ? 10 : 120;
  const uint64_t n = stored ? 37 : five_bit(d) ? 2001 : 301;
  const uint64_t period = five_bit(d) ? 64 : 20;
  const auto data = stored ? random_bytes(n * splitzip::dtype_bytes(d), n)
                           : make_values(d, n, n + checksum, [&](uint64_t i, Rng& r) {
                               return i % period == 4 ? base + 8 + static_cast<uint32_t>(r.next() % 6)
                                                      : base + static_cast<uint32_t>(r.next() % 5);
                             });
  splitzip::Codebook cb;
  cb.dtype = d;
  cb.count = 6;  // codes 6..15 are invalid: corrupted nibbles can hit BAD_CODE
  for (uint8_t c = 0; c < 6; ++c) cb.entries[c] = static_cast<uint8_t>(base + c);
  std::vector<uint8_t> f(splitzip::compress_bound(d, n));
  splitzip::CompressOptions o;
  o.chunk_log2 = 6;  // several chunks, the last one partial
  o.checksum = checksum;
  o.codebook = stored ? nullptr : &cb;
  const splitzip::Result r = splitzip::compress(d, data.data(), n, f.data(), f.size(), o);
  EXPECT_TRUE(r.ok());
  f.resize(r.size);
  splitzip::FrameInfo fi;
  EXPECT_EQ(splitzip::frame_info(f.data(), f.size(), &fi), Status::ok);
  EXPECT_EQ(fi.stored, stored);
  if (!stored) {
    EXPECT_GT(fi.escape_count, 2u);
  }
  return f;
}

// One corrupted frame through every backend. Returns true when it was
// accepted with an output other than `original`: silently wrong data.
bool check(const std::vector<uint8_t>& bad, const std::vector<std::string>& backends, Totals* t,
           const std::string& what, const std::vector<uint8_t>& original) {
  const szfuzz::SpecVerdict v = szfuzz::spec_check(bad.data(), bad.size());
  const uint64_t cap = v.header_ok ? v.decoded_size : 64;
  int accepted = -1;
  for (const auto& b : backends) {
    for (int threads : {1, 2}) {
      splitzip::DecompressOptions o;
      o.backend = b.c_str();
      o.threads = threads;
      std::vector<uint8_t> out(cap + 1);
      // Exact-size copy of the frame, so a read past it is visible to ASan.
      const std::vector<uint8_t> src(bad);
      const splitzip::Result r = splitzip::decompress(src.data(), src.size(), out.data(), cap, o);
      ++t->decodes;
      EXPECT_TRUE(v.allows(r.status)) << what << " " << b << ": " << splitzip::status_name(r.status)
                                      << " (lowest rule: " << splitzip::status_name(v.first()) << ")";
      if (b == "reference") {
        EXPECT_EQ(r.status, v.first()) << what;
      }
      if (accepted < 0) accepted = r.ok();
      EXPECT_EQ(accepted, static_cast<int>(r.ok())) << what << " " << b << " accept/reject differs";
      if (r.ok() && v.ok()) {
        EXPECT_EQ(r.size, v.decoded_size) << what;
        EXPECT_EQ(0, std::memcmp(out.data(), v.output.data(), r.size)) << what << " " << b;
      }
    }
  }
  ++t->faults;
  t->rejected += accepted == 0;
  return accepted == 1 && v.output != original;
}

TEST(ReliabilityFaultInjection, EveryByteEveryBackend) {
  const std::vector<std::string> backends = available_backends();
  Totals t;
  struct Frame {
    std::string name;
    std::vector<uint8_t> bytes;
    bool checksum;
  };
  std::vector<Frame> frames;
  for (Dtype d : kAllDtypes) {
    const std::string dn = splitzip::dtype_name(d);
    frames.push_back({dn + " coded checksum", frame_of(d, true, false), true});
    frames.push_back({dn + " coded", frame_of(d, false, false), false});
    frames.push_back({dn + " stored checksum", frame_of(d, true, true), true});
  }
  // Integrity: no corruption of a header (header_check), of any byte of a
  // frame with CHECKSUM (canonical coding + XXH64), or of the length may
  // yield wrong data. (A corrupted and then re-sealed header may still be
  // accepted when it decodes to the same data, e.g. chunk_log2 of a stored
  // frame.)
  uint64_t header_missed = 0, checksum_missed = 0, prefix_missed = 0;
  for (const Frame& f : frames) {
    SCOPED_TRACE(f.name);
    const szfuzz::SpecVerdict orig = szfuzz::spec_check(f.bytes.data(), f.bytes.size());
    ASSERT_TRUE(orig.ok());
    // Residual bytes only change the output (or the checksum): sample them;
    // every byte of the header, codes, escape streams and padding is hit.
    splitzip::FrameInfo fi;
    ASSERT_EQ(splitzip::frame_info(f.bytes.data(), f.bytes.size(), &fi), Status::ok);
    uint64_t res_begin = 64, res_end = 64;
    if (!fi.stored) {
      const splitzip::FrameLayout L =
          splitzip::coded_layout(static_cast<uint32_t>(fi.dtype), fi.n_elems, fi.chunk_log2, fi.escape_count,
                                 fi.checksum_blocks);
      res_end = L.code_off;
    }
    for (uint64_t i = 0; i < f.bytes.size(); ++i) {
      if (i >= res_begin && i < res_end && i % 8 != 0) continue;
      for (int mask : {0x01, 0x10, 0x80, 0xFF}) {
        std::vector<uint8_t> bad = f.bytes;
        bad[i] = static_cast<uint8_t>(bad[i] ^ mask);
        const bool wrong = check(bad, backends, &t, "byte " + std::to_string(i) + " ^ " + std::to_string(mask),
                                 orig.output);
        if (::testing::Test::HasFailure()) return;
        header_missed += wrong && i < 64;
        checksum_missed += wrong && f.checksum;
        // Header fields: again with header_check recomputed, so the fault
        // reaches the rules behind rule 4.
        if (i < 64 && szfuzz::repair_header_checks(bad.data(), bad.size())) {
          const bool rwrong = check(bad, backends, &t,
                                    "repaired byte " + std::to_string(i) + " ^ " + std::to_string(mask), orig.output);
          if (::testing::Test::HasFailure()) return;
          checksum_missed += rwrong && f.checksum;
        }
      }
    }
    for (uint64_t len = 0; len < f.bytes.size(); ++len) {
      const std::vector<uint8_t> cut(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(len));
      prefix_missed += check(cut, backends, &t, "prefix " + std::to_string(len), orig.output);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // The figures quoted in docs/RELIABILITY.md.
  std::printf("fault injection: %llu corrupted frames, %llu rejected, %llu decodes over %zu backends\n",
              static_cast<unsigned long long>(t.faults), static_cast<unsigned long long>(t.rejected),
              static_cast<unsigned long long>(t.decodes), backends.size());
  RecordProperty("faults", std::to_string(t.faults));
  EXPECT_EQ(header_missed, 0u);
  EXPECT_EQ(checksum_missed, 0u);
  EXPECT_EQ(prefix_missed, 0u);
}

}  // namespace
}  // namespace szrel
