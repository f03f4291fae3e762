// SPDX-License-Identifier: Apache-2.0
// The CPU capacity codec with table sets (FORMAT.md 4.9) against the
// reference: the same bytes at 1, 2 and 3 threads for every T and dtype,
// round trips, MISSING_TABLES, the own-table fallback and the same
// statuses on malformed blocks; on every runnable Highway target.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/capacity/tables.h"
#include "core/header.h"
#include "core/reference.h"
#include "cpu/capacity_codec.h"
#include "tests/capacity/tables_golden.h"
#include "tests/cpu/cpu_test_util.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip {
namespace {

CapTables calibrated(Dtype d, uint32_t T, const std::vector<uint8_t>& sample) {
  const void* bufs[1] = {sample.data()};
  const uint64_t n[1] = {sample.size() / dtype_bytes(d)};
  CapTables ts;
  EXPECT_EQ(cap_tables_from_samples(d, T, bufs, n, 1, &ts), Status::ok);
  return ts;
}

std::vector<uint8_t> enc(Dtype d, const std::vector<uint8_t>& in, const CapTables* ts, bool ck, int threads,
                         bool fast) {
  CompressArgs a;
  a.dtype = d;
  a.n = in.size() / dtype_bytes(d);
  a.src = in.data();
  std::vector<uint8_t> out(compress_bound(d, a.n));
  a.dst = out.data();
  a.capacity = out.size();
  a.checksum = ck;
  a.threads = threads;
  a.mode = Mode::capacity;
  a.tables = ts;
  const FrameOutcome o = fast ? capacity_compress_frame(a) : reference_compress(a);
  EXPECT_EQ(o.status, Status::ok);
  out.resize(o.frame_size);
  return out;
}

FrameOutcome dec(const std::vector<uint8_t>& f, uint64_t cap, const CapTables* ts, int threads, bool fast,
                 std::vector<uint8_t>* out) {
  out->assign(cap, 0);
  DecompressArgs a;
  a.src = f.data();
  a.src_size = f.size();
  a.dst = out->data();
  a.capacity = cap;
  a.threads = threads;
  const CapTables* sets[1] = {ts};
  a.tables = ts != nullptr ? sets : nullptr;
  a.n_tables = ts != nullptr ? 1 : 0;
  return fast ? capacity_decompress_frame(a) : reference_decompress(a);
}

class TablesCpu : public cpu_test::PerTarget {};

TEST_P(TablesCpu, SameBytesAsReference) {
  int tables_frames = 0;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2})
    for (uint32_t T : {1u, 2u, 8u, 32u}) {
      const auto calib = synth::generate(synth::Generator::gaussian_kv, d, 50000, 5, {});
      const CapTables ts = calibrated(d, T, calib);
      for (uint64_t n : {uint64_t{1}, uint64_t{33}, uint64_t{16384}, uint64_t{2 * 65536 + 5}})
        for (auto g : {synth::Generator::gaussian_kv, synth::Generator::special_values})
          for (bool ck : {false, true}) {
            SCOPED_TRACE(std::string(dtype_name(d)) + " T=" + std::to_string(T) + " n=" + std::to_string(n) + " " +
                         synth::generator_name(g));
            const auto in = synth::generate(g, d, n, n + 3, {});
            // A set from other data (blocks fall back to their own tables
            // where it lacks a value) and one from this input (shared blocks).
            const CapTables own = calibrated(d, T, in);
            for (const CapTables* set : {&ts, &own}) {
              const auto ref = enc(d, in, set, ck, 1, false);
              for (int t : {1, 2, 3}) {
                ASSERT_EQ(enc(d, in, set, ck, t, true), ref) << "threads " << t;
                std::vector<uint8_t> out;
                ASSERT_EQ(dec(ref, in.size(), set, t, true, &out).status, Status::ok);
                ASSERT_EQ(out, in);
              }
              FrameHeader h;
              ASSERT_EQ(parse_header(ref.data(), ref.size(), &h), Status::ok);
              if (h.has_tables()) {
                std::vector<uint8_t> out;
                EXPECT_EQ(dec(ref, in.size(), nullptr, 1, true, &out).status, Status::missing_tables);
                ++tables_frames;
              }
            }
          }
    }
  EXPECT_GT(tables_frames, 50);
}

TEST_P(TablesCpu, RealKvOwnTableFallbackAndReuse) {
  const auto inputs = test::real_inputs(Dtype::bf16);
  ASSERT_FALSE(inputs.empty());
  const CapTables ts = calibrated(Dtype::bf16, 32, inputs[0].bytes);
  for (const auto& r : inputs) {
    // Pages of 32 KiB, as a serving stack moves them.
    for (uint64_t off = 0; off < r.bytes.size(); off += 32768) {
      const std::vector<uint8_t> page(r.bytes.begin() + static_cast<std::ptrdiff_t>(off),
                                      r.bytes.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(off + 32768, r.bytes.size())));
      const auto ref = enc(Dtype::bf16, page, &ts, true, 1, false);
      ASSERT_EQ(enc(Dtype::bf16, page, &ts, true, 1, true), ref) << r.name << " @" << off;
      std::vector<uint8_t> out;
      ASSERT_EQ(dec(ref, page.size(), &ts, 1, true, &out).status, Status::ok) << r.name;
      ASSERT_EQ(out, page) << r.name;
    }
  }
  // A symbol no table codes: that block has its own table, on both codecs.
  auto in = inputs[0].bytes;
  uint32_t missing = 0;
  while (ts.len[0][missing] != 0) ++missing;
  const uint16_t x = static_cast<uint16_t>(missing << 7);
  std::memcpy(in.data() + 2 * 77, &x, 2);
  const auto ref = enc(Dtype::bf16, in, &ts, false, 1, false);
  FrameHeader h;
  ASSERT_EQ(parse_header(ref.data(), ref.size(), &h), Status::ok);
  EXPECT_EQ(ref[capacity_layout_of(h).blk_off], kCapKindOwn);
  ASSERT_EQ(enc(Dtype::bf16, in, &ts, false, 2, true), ref);
  std::vector<uint8_t> out;
  ASSERT_EQ(dec(ref, in.size(), &ts, 2, true, &out).status, Status::ok);
  EXPECT_EQ(out, in);
}

// Rare values far from the common exponents (stray zeros, a set's reach)
// widen a table's span past two byte-table windows; the packer covers only
// the short codes with windows and patches the rest lane by lane. Same
// bytes as the reference, with the set and with per-block tables, whether
// the rare values are a few or in most vectors.
TEST_P(TablesCpu, RareValuesOutsideThePackerWindows) {
  for (uint64_t every : {uint64_t{4001}, uint64_t{97}, uint64_t{7}}) {
    auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 3 * 65536 + 100, 11, {});
    auto* v = reinterpret_cast<uint16_t*>(in.data());
    const uint64_t n = in.size() / 2;
    for (uint64_t i = 5; i < n; i += every) v[i] = static_cast<uint16_t>(v[i] & 0x807F);  // exponent 0
    for (uint64_t i = 11; i < n; i += 3 * every) v[i] = static_cast<uint16_t>((v[i] & 0x807F) | (200u << 7));
    SCOPED_TRACE("every " + std::to_string(every));
    const CapTables ts = calibrated(Dtype::bf16, 1, in);
    ASSERT_NE(ts.len[0][0], 0);
    ASSERT_NE(ts.len[0][200], 0);
    for (const CapTables* set : {&ts, static_cast<const CapTables*>(nullptr)}) {
      const auto ref = enc(Dtype::bf16, in, set, true, 1, false);
      ASSERT_EQ(enc(Dtype::bf16, in, set, true, 1, true), ref);
      ASSERT_EQ(enc(Dtype::bf16, in, set, true, 3, true), ref);
      std::vector<uint8_t> out;
      ASSERT_EQ(dec(ref, in.size(), set, 2, true, &out).status, Status::ok);
      ASSERT_EQ(out, in);
    }
  }
}

// Pages round robin over more sets than the per-thread encoder memo holds
// (each set's codes built, kept, evicted and built again): every frame is
// the reference's, T = 1 and T = 32 interleaved.
TEST_P(TablesCpu, ManySetsRoundRobin) {
  std::vector<CapTables> sets;
  for (uint64_t k = 0; k < 150; ++k) {
    const auto calib = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 4096, 100 + k, {});
    sets.push_back(calibrated(Dtype::bf16, k % 3 == 0 ? 32u : 1u, calib));
  }
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 4096, 7, {});
  for (int round = 0; round < 2; ++round)
    for (size_t k = 0; k < sets.size(); k += round == 0 ? 1 : 7) {
      const auto ref = enc(Dtype::bf16, in, &sets[k], true, 1, false);
      ASSERT_EQ(enc(Dtype::bf16, in, &sets[k], true, 1, true), ref) << "set " << k << " round " << round;
    }
}

TEST_P(TablesCpu, MalformedBlocksGiveTheReferenceStatus) {
  const auto calib = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 2 * 65536, 9, {});
  const CapTables ts = calibrated(Dtype::bf16, 4, calib);
  const auto f = enc(Dtype::bf16, calib, &ts, false, 1, false);
  FrameHeader h;
  ASSERT_EQ(parse_header(f.data(), f.size(), &h), Status::ok);
  const CapLayout L = capacity_layout_of(h);
  int faults = 0;
  for (uint64_t at = L.blk_off; at < L.blk_off + L.blk_size; at += 1009) {
    for (uint8_t flip : {0x01, 0x80, 0xFF}) {
      auto b = f;
      b[at] ^= flip;
      std::vector<uint8_t> o1, o2;
      const Status want = dec(b, calib.size(), &ts, 1, false, &o1).status;
      ASSERT_EQ(dec(b, calib.size(), &ts, 1, true, &o2).status, want) << "byte " << at << " ^" << int(flip);
      ASSERT_EQ(dec(b, calib.size(), &ts, 2, true, &o2).status, want) << "byte " << at;
      faults += want != Status::ok;
    }
  }
  EXPECT_GT(faults, 0);
}

// The committed v3_tables frames (hash of frames.txt) at 1 and 2 threads,
// and the golden-error vectors' statuses.
TEST_P(TablesCpu, GoldenVectors) {
  bool ok = false;
  const auto t = test::read_file(tables_golden::dir() + "/frames.txt", &ok);
  ASSERT_TRUE(ok);
  const std::string table(t.begin(), t.end());
  for (const auto& c : tables_golden::cases()) {
    SCOPED_TRACE(c.name);
    const CapTables ts = tables_golden::set_of(c);
    const auto in = tables_golden::input(c);
    for (int th : {1, 2}) {
      const auto f = enc(c.dtype, in, &ts, c.checksum, th, true);
      EXPECT_NE(table.find(tables_golden::line(c.name, f) + "\n"), std::string::npos);
      std::vector<uint8_t> out;
      ASSERT_EQ(dec(f, in.size(), &ts, th, true, &out).status, Status::ok);
      EXPECT_EQ(out, in);
    }
  }
  for (const auto& f : tables_golden::faults()) {
    SCOPED_TRACE(f.name);
    const auto frame = test::read_file(tables_golden::errors_dir() + "/" + f.name + ".sz", &ok);
    ASSERT_TRUE(ok);
    for (const auto& c : tables_golden::cases())
      if (std::string(c.name) == f.base) {
        const CapTables ts = tables_golden::set_of(c);
        std::vector<uint8_t> out;
        EXPECT_EQ(dec(frame, c.n * dtype_bytes(c.dtype), f.given ? &ts : nullptr, 1, true, &out).status, f.want);
      }
  }
}

SPLITZIP_INSTANTIATE_PER_TARGET(TablesCpu);

}  // namespace
}  // namespace splitzip
