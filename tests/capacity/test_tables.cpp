// SPDX-License-Identifier: Apache-2.0
// Capacity table sets (FORMAT.md 4.9, 13): the set's serialized form and
// its rejects, the deterministic calibration, and the reference codec's
// TABLES frames (round trip, kinds, MISSING_TABLES, header rules).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/capacity/reference_capacity.h"
#include "core/capacity/tables.h"
#include "core/header.h"
#include "core/reference.h"
#include "tests/capacity/tables_golden.h"
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

std::vector<uint8_t> serialized(const CapTables& ts) {
  std::vector<uint8_t> b(cap_tables_serialized_size(ts));
  cap_tables_serialize(ts, b.data());
  return b;
}

// Re-hash the id after an edit, so the checks past 4 are reached.
void rehash(std::vector<uint8_t>* b) { store_le64(b->data() + b->size() - 8, hash_xxh3(b->data(), b->size() - 8)); }

TEST(CapTables, SerializeParseRoundTripAndId) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 100000, 7, {});
  for (uint32_t T : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const CapTables ts = calibrated(Dtype::bf16, T, in);
    const auto b = serialized(ts);
    ASSERT_EQ(b.size(), 16u + 128u * T);
    EXPECT_EQ(ts.id, hash_xxh3(b.data(), b.size() - 8));
    EXPECT_EQ(ts.id, load_le64(b.data() + b.size() - 8));
    CapTables back;
    ASSERT_EQ(cap_tables_parse(b.data(), b.size(), &back), Status::ok) << T;
    EXPECT_EQ(back.id, ts.id);
    EXPECT_EQ(back.count, T);
    EXPECT_EQ(std::memcmp(back.len, ts.len, sizeof ts.len), 0);
    // Deterministic: the same samples give the same set.
    EXPECT_EQ(calibrated(Dtype::bf16, T, in).id, ts.id);
  }
}

// Package-merge (4.6.3) of the counts 13.1 gives table t: its histogram
// row, 1 for a leaf no stream of t saw, 0 off the leaves.
CapTable expected_table(const uint64_t* row, const std::vector<uint32_t>& leaves) {
  uint64_t c[256] = {};
  for (uint32_t e : leaves) c[e] = row[e] > 0 ? row[e] : 1;
  CapTable t;
  CapMergeScratch w;
  cap_code_lengths_of(c, &t, &w);
  return t;
}

std::vector<uint32_t> range_and_zero(uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> r{0};
  for (uint32_t e = lo; e <= hi; ++e) r.push_back(e);
  return r;
}

TEST(CapTables, CalibrationIsPackageMergeOfTheStreamHistograms) {
  // Element i goes to table i mod T; a value seen in one table's streams
  // only gets count 1 (a code) in the others; the reach adds 8 magnitudes
  // below the smallest seen, 2 above the largest, and 0, each at count 1.
  std::vector<uint16_t> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>((i % 2 == 0 ? 120 : (i % 4 == 1 ? 121 : 122)) << 7);
  std::vector<uint8_t> bytes(v.size() * 2);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  const CapTables ts = calibrated(Dtype::bf16, 2, bytes);
  uint64_t h0[256] = {}, h1[256] = {};
  h0[120] = 32;  // table 0 saw only 120, table 1 saw 121 and 122 (16 each)
  h1[121] = h1[122] = 16;
  const auto leaves = range_and_zero(120 - kCapReachBelow, 122 + kCapReachAbove);
  const CapTable e0 = expected_table(h0, leaves), e1 = expected_table(h1, leaves);
  EXPECT_EQ(std::memcmp(ts.len[0], e0.len, 256), 0);
  EXPECT_EQ(std::memcmp(ts.len[1], e1.len, 256), 0);
  EXPECT_EQ(ts.len[0][111], 0);
  EXPECT_NE(ts.len[0][112], 0);
  EXPECT_NE(ts.len[0][124], 0);
  EXPECT_EQ(ts.len[0][125], 0);
  EXPECT_NE(ts.len[0][0], 0);
  EXPECT_LT(ts.len[0][120], ts.len[0][121]);
  EXPECT_LT(ts.len[1][121], ts.len[1][120]);
  EXPECT_TRUE(cap_tables_same_symbols(ts));
  // One value: the reach makes the code complete (0, 1, 2).
  std::vector<uint8_t> one(64, 0);
  const CapTables t1 = calibrated(Dtype::bf16, 1, one);
  uint64_t z[256] = {};
  z[0] = 32;
  const CapTable e_one = expected_table(z, range_and_zero(0, 2));
  EXPECT_EQ(std::memcmp(t1.len[0], e_one.len, 256), 0);
  EXPECT_NE(t1.len[0][2], 0);
  EXPECT_EQ(t1.len[0][3], 0);
  // Near the top of the range, the reach stops at the symbol limit.
  std::vector<uint16_t> top(64, static_cast<uint16_t>(0x7F80));  // exponent 255
  std::vector<uint8_t> top_bytes(128);
  std::memcpy(top_bytes.data(), top.data(), top_bytes.size());
  const CapTables tt = calibrated(Dtype::bf16, 1, top_bytes);
  EXPECT_NE(tt.len[0][255], 0);
  EXPECT_NE(tt.len[0][247], 0);
  EXPECT_EQ(tt.len[0][246], 0);
}

TEST(CapTables, CalibrationReachOfFp8E4m3IsByMagnitudeBothSigns) {
  // fp8_e4m3 symbols are bytes (4.6.7): the reach is over the low 7 bits,
  // for either sign.
  std::vector<uint8_t> b(64);
  for (size_t i = 0; i < b.size(); ++i) b[i] = i % 3 == 0 ? 0x38 : (i % 3 == 1 ? 0xB8 : 0x3A);
  const CapTables ts = calibrated(Dtype::fp8_e4m3, 1, b);
  for (uint32_t m = 0x30; m <= 0x3C; ++m) {
    EXPECT_NE(ts.len[0][m], 0) << m;
    EXPECT_NE(ts.len[0][m | 0x80], 0) << m;
  }
  EXPECT_NE(ts.len[0][0], 0);
  EXPECT_EQ(ts.len[0][0x80], 0);
  EXPECT_EQ(ts.len[0][0x2F], 0);
  EXPECT_EQ(ts.len[0][0xAF], 0);
  EXPECT_EQ(ts.len[0][0x3D], 0);
  EXPECT_EQ(ts.len[0][0xBD], 0);
}

TEST(CapTables, CalibrationRejects) {
  CapTables ts;
  uint64_t hist[256] = {};
  EXPECT_EQ(cap_tables_calibrate(Dtype::bf16, 1, hist, &ts), Status::invalid_argument);  // no samples
  hist[3] = 1;
  EXPECT_EQ(cap_tables_calibrate(Dtype::bf16, 3, hist, &ts), Status::invalid_argument);  // not a power of 2
  EXPECT_EQ(cap_tables_calibrate(Dtype::bf16, 64, hist, &ts), Status::invalid_argument);
  hist[40] = 1;
  // fp8_e4m3's mode-1 symbol is the whole byte (FORMAT.md 4.6.7): 40 is a symbol.
  ASSERT_EQ(cap_tables_calibrate(Dtype::fp8_e4m3, 1, hist, &ts), Status::ok);
  EXPECT_NE(ts.len[0][40], 0);
  hist[200] = 1;
  EXPECT_EQ(cap_tables_calibrate(Dtype::fp8_e4m3, 1, hist, &ts), Status::ok);
  EXPECT_NE(ts.len[0][200], 0);
  hist[200] = 0;
  EXPECT_EQ(cap_tables_calibrate(Dtype::fp16, 1, hist, &ts), Status::invalid_argument);  // value >= 32
  EXPECT_EQ(cap_tables_calibrate(Dtype::bf16, 1, hist, &ts), Status::ok);
}

TEST(CapTables, ParseRejectsInOrder) {
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 5000, 3, {});
  const auto good = serialized(calibrated(Dtype::bf16, 4, in));
  CapTables ts;
  auto parse = [&](const std::vector<uint8_t>& b) { return cap_tables_parse(b.data(), b.size(), &ts); };
  EXPECT_EQ(parse(good), Status::ok);
  EXPECT_EQ(cap_tables_parse(good.data(), 15, &ts), Status::truncated);
  auto b = good;
  b[0] ^= 1;
  EXPECT_EQ(parse(b), Status::bad_magic);
  b = good;
  b[4] = 2;
  EXPECT_EQ(parse(b), Status::unsupported_version);
  b = good;
  b[20] ^= 0x10;
  EXPECT_EQ(parse(b), Status::header_corrupt);
  b = good;
  b[5] = 0;
  rehash(&b);
  EXPECT_EQ(parse(b), Status::bad_dtype);
  b = good;
  b[5] = 6;  // reserved
  rehash(&b);
  EXPECT_EQ(parse(b), Status::bad_dtype);
  b = good;
  b[5] = static_cast<uint8_t>(Dtype::fp8_e4m3);  // mode 1 since v3 (4.6.7): bf16 lengths are valid byte symbols
  rehash(&b);
  EXPECT_EQ(parse(b), Status::ok);
  b = good;
  b[6] = 6;
  rehash(&b);
  EXPECT_EQ(parse(b), Status::reserved_bits);
  b = good;
  b[7] = 1;
  rehash(&b);
  EXPECT_EQ(parse(b), Status::reserved_bits);
  b = good;
  b[6] = 3;  // says T = 8, has 4 tables
  rehash(&b);
  EXPECT_EQ(parse(b), Status::size_mismatch);
  // Table content: a length of 13, a value past fp16's 32, an incomplete code, one symbol.
  b = good;
  b[8] = static_cast<uint8_t>((b[8] & 0xF0) | 13);
  rehash(&b);
  EXPECT_EQ(parse(b), Status::bad_codebook);
  b = good;
  std::memset(b.data() + 8, 0, 128);  // table 0 empty
  rehash(&b);
  EXPECT_EQ(parse(b), Status::bad_codebook);
  b = good;
  std::memset(b.data() + 8, 0, 128);
  b[8] = 0x11;  // values 0 and 1, length 1 each: complete
  rehash(&b);
  EXPECT_EQ(parse(b), Status::ok);
  b[8] = 0x21;  // 1 and 2: incomplete
  rehash(&b);
  EXPECT_EQ(parse(b), Status::bad_codebook);
  b[8] = 0x01;  // one symbol
  rehash(&b);
  EXPECT_EQ(parse(b), Status::bad_codebook);
  auto f16 = serialized(calibrated(Dtype::bf16, 1, in));
  f16[5] = static_cast<uint8_t>(Dtype::fp16);  // bf16 exponents >= 32 in an fp16 set
  rehash(&f16);
  EXPECT_EQ(parse(f16), Status::bad_codebook);
}

std::vector<uint8_t> ref_enc(Dtype d, const std::vector<uint8_t>& in, const CapTables* ts, bool ck = true) {
  CompressArgs a;
  a.dtype = d;
  a.n = in.size() / dtype_bytes(d);
  a.src = in.data();
  std::vector<uint8_t> out(compress_bound(d, a.n));
  a.dst = out.data();
  a.capacity = out.size();
  a.checksum = ck;
  a.mode = Mode::capacity;
  a.tables = ts;
  const FrameOutcome o = reference_compress(a);
  EXPECT_EQ(o.status, Status::ok);
  out.resize(o.frame_size);
  return out;
}

FrameOutcome ref_dec(const std::vector<uint8_t>& f, uint64_t cap, const CapTables* const* sets, uint64_t n_sets,
                     std::vector<uint8_t>* out) {
  out->assign(cap, 0);
  DecompressArgs a;
  a.src = f.data();
  a.src_size = f.size();
  a.dst = out->data();
  a.capacity = cap;
  a.tables = sets;
  a.n_tables = n_sets;
  return reference_decompress(a);
}

TEST(CapTablesFrame, ReferenceRoundTripVersionAndMissing) {
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2})
    for (uint32_t T : {1u, 2u, 32u}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " T=" + std::to_string(T));
      const auto calib = synth::generate(synth::Generator::gaussian_kv, d, 70000, 1, {});
      const auto in = synth::generate(synth::Generator::gaussian_kv, d, 3 * 65536 + 77, 2, {});
      const CapTables ts = calibrated(d, T, calib);
      const auto f = ref_enc(d, in, &ts);
      FrameHeader h;
      ASSERT_EQ(parse_header(f.data(), f.size(), &h), Status::ok);
      EXPECT_EQ(h.version, 3);
      EXPECT_TRUE(h.has_tables());
      EXPECT_EQ(h.tables_id(), ts.id);
      std::vector<uint8_t> out;
      const CapTables* sets[2] = {nullptr, &ts};
      ASSERT_EQ(ref_dec(f, in.size(), sets, 2, &out).status, Status::ok);
      EXPECT_EQ(out, in);
      // Not given, or only another set: MISSING_TABLES.
      EXPECT_EQ(ref_dec(f, in.size(), nullptr, 0, &out).status, Status::missing_tables);
      CapTables other = ts;
      other.id ^= 1;
      const CapTables* wrong[1] = {&other};
      EXPECT_EQ(ref_dec(f, in.size(), wrong, 1, &out).status, Status::missing_tables);
      // Without a set the same input is a v2 frame, unchanged.
      const auto plain = ref_enc(d, in, nullptr);
      ASSERT_EQ(parse_header(plain.data(), plain.size(), &h), Status::ok);
      EXPECT_EQ(h.version, 2);
      EXPECT_FALSE(h.has_tables());
    }
}

// Stream 9 of a bf16 frame: the kinds of its blocks.
std::vector<uint8_t> kinds(const std::vector<uint8_t>& f) {
  FrameHeader h;
  EXPECT_EQ(parse_header(f.data(), f.size(), &h), Status::ok);
  const CapLayout L = capacity_layout_of(h);
  std::vector<uint8_t> k;
  uint64_t off = L.blk_off;
  for (uint64_t b = 0; b < L.n_blocks; ++b) {
    k.push_back(f[off]);
    off += cap_index_entry(f.data(), L, b);
  }
  return k;
}

TEST(CapTablesFrame, ABlockWithAMissingSymbolHasItsOwnTable) {
  auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 3 * 65536, 2, {});
  const CapTables ts = calibrated(Dtype::bf16, 4, in);
  // An exponent no table codes, in block 1 only.
  uint32_t missing = 0;
  while (ts.len[0][missing] != 0) ++missing;
  const uint16_t x = static_cast<uint16_t>(missing << 7);
  std::memcpy(in.data() + 2 * (65536 + 123), &x, 2);
  const auto f = ref_enc(Dtype::bf16, in, &ts);
  EXPECT_EQ(kinds(f), (std::vector<uint8_t>{kCapKindShared, kCapKindOwn, kCapKindShared}));
  std::vector<uint8_t> out;
  const CapTables* sets[1] = {&ts};
  ASSERT_EQ(ref_dec(f, in.size(), sets, 1, &out).status, Status::ok);
  EXPECT_EQ(out, in);
}

TEST(CapTablesFrame, HeaderRules) {
  const auto calib = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 65536, 1, {});
  const CapTables ts = calibrated(Dtype::bf16, 2, calib);
  const auto f = ref_enc(Dtype::bf16, calib, &ts, false);
  FrameHeader h;
  auto reheader = [&](std::vector<uint8_t> b) {
    store_le32(b.data() + kHeaderCheckOffset, header_check(b.data()));
    return parse_header(b.data(), b.size(), &h);
  };
  auto b = f;
  b[4] = 2;  // v2 with TABLES: bit 3 is reserved there
  EXPECT_EQ(reheader(b), Status::reserved_bits);
  b = f;
  b[6] &= static_cast<uint8_t>(~kFlagTables);  // v3 without a v3 feature
  for (int i = 32; i < 40; ++i) b[i] = 0;
  EXPECT_EQ(reheader(b), Status::bad_header);
  b = f;
  b[44] = 1;  // bytes 40..48 stay zero
  EXPECT_EQ(reheader(b), Status::bad_header);
  b = f;
  b[6] |= 0x10;  // bits 4..7 reserved in v3
  EXPECT_EQ(reheader(b), Status::reserved_bits);
  EXPECT_EQ(reheader(f), Status::ok);
}

TEST(CapTablesFrame, MalformedBlocks) {
  const auto calib = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 65536, 1, {});
  const CapTables ts = calibrated(Dtype::bf16, 8, calib);
  const auto f = ref_enc(Dtype::bf16, calib, &ts, false);
  FrameHeader h;
  ASSERT_EQ(parse_header(f.data(), f.size(), &h), Status::ok);
  const CapLayout L = capacity_layout_of(h);
  const CapTables* sets[1] = {&ts};
  std::vector<uint8_t> out;
  auto b = f;
  b[L.blk_off] = 2;  // kind 2
  EXPECT_EQ(ref_dec(b, calib.size(), sets, 1, &out).status, Status::bad_code);
  b = f;
  b[L.blk_off + 1] ^= 1;  // stream 0's size: the sizes no longer fill the block
  EXPECT_EQ(ref_dec(b, calib.size(), sets, 1, &out).status, Status::bad_code);
}

// ---- golden vectors: tests/golden/v3_tables, tests/golden-errors/v3_tables ----
// SPLITZIP_REGEN_GOLDEN=1 rewrites them from tables_golden.h's cases.

TEST(TablesGolden, FramesAndSetsMatchCommittedBytes) {
  const bool regen = std::getenv("SPLITZIP_REGEN_GOLDEN") != nullptr;
  std::string table =
      "# Committed table-set frames (FORMAT.md 4.9, v3) of tests/capacity/tables_golden.h: name, frame size,\n"
      "# XXH3-64 (hex) of the frame. Sets: NAME.szct; frames up to 16 KiB: sz/NAME.sz.\n"
      "# Regenerate: SPLITZIP_REGEN_GOLDEN=1 splitzip_capacity_tables_tests --gtest_filter='TablesGolden.*'\n";
  bool ok = false;
  const auto committed_table = test::read_file(tables_golden::dir() + "/frames.txt", &ok);
  const std::string expected(committed_table.begin(), committed_table.end());
  int shared = 0, own = 0;
  for (const auto& c : tables_golden::cases()) {
    SCOPED_TRACE(c.name);
    const CapTables ts = tables_golden::set_of(c);
    const auto set = tables_golden::set_bytes(ts);
    const auto in = tables_golden::input(c);
    const auto frame = ref_enc(c.dtype, in, &ts, c.checksum);
    const std::string name = c.name;
    table += tables_golden::line(name, frame) + "\n";
    const std::string szct = tables_golden::dir() + "/" + name + ".szct", sz = tables_golden::dir() + "/sz/" + name + ".sz";
    if (regen) {
      ASSERT_TRUE(test::write_file(szct, set));
      if (frame.size() <= 16384) ASSERT_TRUE(test::write_file(sz, frame));
      continue;
    }
    EXPECT_NE(expected.find(tables_golden::line(name, frame) + "\n"), std::string::npos);
    EXPECT_EQ(test::read_file(szct, &ok), set);
    CapTables parsed;
    ASSERT_EQ(cap_tables_parse(set.data(), set.size(), &parsed), Status::ok);
    const auto committed = test::read_file(sz, &ok);
    if (ok) EXPECT_EQ(committed, frame);
    for (uint8_t k : kinds(frame)) (k == kCapKindShared ? shared : own)++;
    std::vector<uint8_t> out;
    const CapTables* sets[1] = {&parsed};
    ASSERT_EQ(ref_dec(frame, in.size(), sets, 1, &out).status, Status::ok);
    EXPECT_EQ(out, in);
  }
  if (regen) {
    ASSERT_TRUE(test::write_file(tables_golden::dir() + "/frames.txt", std::vector<uint8_t>(table.begin(), table.end())));
    return;
  }
  EXPECT_EQ(expected, table);
  EXPECT_GT(shared, 0);
  EXPECT_GT(own, 0);  // the fallback case
}

// Each error vector: NAME.sz, the frame with one fault; errors.txt: name,
// the case whose set decodes it (or "-": none given), the status.
TEST(TablesGolden, ErrorVectors) {
  const bool regen = std::getenv("SPLITZIP_REGEN_GOLDEN") != nullptr;
  const auto cs = tables_golden::cases();
  auto find = [&](const std::string& n) {
    for (const auto& c : cs)
      if (n == c.name) return c;
    return cs[0];
  };
  std::string list = "# Golden-error vectors of table-set frames (FORMAT.md 4.9): name, set (case), status.\n";
  bool ok = false;
  for (const auto& f : tables_golden::faults()) {
    SCOPED_TRACE(f.name);
    const auto c = find(f.base);
    const CapTables ts = tables_golden::set_of(c);
    const auto in = tables_golden::input(c);
    auto frame = ref_enc(c.dtype, in, &ts, c.checksum);
    FrameHeader h;
    ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
    frame[(f.in_blocks ? capacity_layout_of(h).blk_off : 0) + f.at] = f.value;
    const std::string path = tables_golden::errors_dir() + "/" + f.name + ".sz";
    list += std::string(f.name) + " " + (f.given ? c.name : "-") + " " + status_name(f.want) + "\n";
    std::vector<uint8_t> out;
    const CapTables* sets[1] = {&ts};
    EXPECT_EQ(ref_dec(frame, in.size(), f.given ? sets : nullptr, f.given ? 1 : 0, &out).status, f.want);
    if (regen) {
      ASSERT_TRUE(test::write_file(path, frame));
      continue;
    }
    EXPECT_EQ(test::read_file(path, &ok), frame);
  }
  if (regen) {
    ASSERT_TRUE(test::write_file(tables_golden::errors_dir() + "/errors.txt", std::vector<uint8_t>(list.begin(), list.end())));
    return;
  }
  const auto committed = test::read_file(tables_golden::errors_dir() + "/errors.txt", &ok);
  EXPECT_EQ(std::string(committed.begin(), committed.end()), list);
}

}  // namespace
}  // namespace splitzip
