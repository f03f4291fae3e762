// SPDX-License-Identifier: Apache-2.0
// The CUDA capacity-mode kernels' per-thread logic (cuda/capacity_logic.h),
// run on the CPU by tests/cuda/capacity_emulator.cpp, against the scalar
// reference (core/reference_capacity.cpp): byte-identical frames, identical
// decoded bytes, identical statuses on the golden error vectors and on
// corrupted frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/capacity/format.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/reference.h"
#include "tests/cuda/capacity_cases.h"
#include "tests/cuda/capacity_emulator.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

constexpr uint8_t kPoison = 0xCD;
const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3};

struct Ref {
  Status status;
  std::vector<uint8_t> frame;
};

Ref reference_cap(Dtype d, const void* src, uint64_t n, bool checksum, uint64_t capacity = ~uint64_t{0}) {
  CompressArgs a;
  a.dtype = d;
  a.n = n;
  a.src = src;
  std::vector<uint8_t> out(compress_bound(d, n));
  a.dst = out.data();
  a.capacity = std::min<uint64_t>(capacity, out.size());
  a.checksum = checksum;
  a.mode = Mode::capacity;
  const FrameOutcome o = reference_compress(a);
  out.resize(o.status == Status::ok ? o.frame_size : 0);
  return {o.status, out};
}

FrameOutcome reference_decode(const std::vector<uint8_t>& frame, std::vector<uint8_t>* out, uint64_t cap) {
  out->assign(cap, 0);
  DecompressArgs a;
  a.src = frame.data();
  a.src_size = frame.size();
  a.dst = out->data();
  a.capacity = cap;
  a.verify_checksum = true;
  return reference_decompress(a);
}

// Emulated frame == reference frame (src and dst at byte offsets, blocks in
// both orders), no byte written outside it; the emulated decoder gives the
// input back from the reference frame.
::testing::AssertionResult matches(Dtype d, const void* src, uint64_t n, bool checksum, uint32_t src_off = 0,
                                   uint32_t dst_off = 0) {
  const uint64_t bytes = n * dtype_bytes(d);
  const Ref want = reference_cap(d, src, n, checksum);
  if (want.status != Status::ok) return ::testing::AssertionFailure() << "reference: " << status_name(want.status);
  std::vector<uint8_t> in(bytes + src_off + 16);
  if (bytes) std::memcpy(in.data() + src_off, src, bytes);
  const uint64_t cap = compress_bound(d, n);
  for (bool reverse : {false, true}) {
    std::vector<uint8_t> out(cap + dst_off + 64, kPoison);
    const EmuResult r =
        emulate_capacity_compress(d, in.data() + src_off, n, out.data() + dst_off, cap, kDefaultChunkLog2, checksum, reverse);
    if (r.status != Status::ok) return ::testing::AssertionFailure() << "emulated encode: " << status_name(r.status);
    if (r.size != want.frame.size() || !std::equal(want.frame.begin(), want.frame.end(), out.begin() + dst_off)) {
      uint64_t i = 0;
      while (i < std::min<uint64_t>(r.size, want.frame.size()) && out[dst_off + i] == want.frame[i]) ++i;
      return ::testing::AssertionFailure() << "frame differs: size " << r.size << " vs " << want.frame.size()
                                           << ", first difference at byte " << i;
    }
    for (uint64_t i = 0; i < out.size(); ++i)
      if ((i < dst_off || i >= dst_off + r.size) && out[i] != kPoison)
        return ::testing::AssertionFailure() << "wrote outside the frame at " << i;
  }
  std::vector<uint8_t> fr(want.frame.size() + src_off);
  std::memcpy(fr.data() + src_off, want.frame.data(), want.frame.size());
  for (bool reverse : {false, true}) {
    std::vector<uint8_t> dec(bytes + dst_off + 16, kPoison);
    const EmuCapDecode e =
        emulate_capacity_decompress(fr.data() + src_off, want.frame.size(), dec.data() + dst_off, bytes, true, 0, reverse);
    const bool mode1 = want.frame.size() >= 64 && want.frame[49] == kModeCapacity;
    if (!mode1) {  // stored frames are the mode-0 kernels'
      if (e.handled) return ::testing::AssertionFailure() << "capacity decoder took a stored frame";
      continue;
    }
    if (!e.handled || e.r.status != Status::ok)
      return ::testing::AssertionFailure() << "emulated decode: " << status_name(e.r.status);
    if (e.r.size != bytes || (bytes && std::memcmp(dec.data() + dst_off, src, bytes) != 0))
      return ::testing::AssertionFailure() << "decoded bytes differ";
  }
  return ::testing::AssertionSuccess();
}

// ---- golden frames: tests/golden/capacity ----

std::string hex64(uint64_t v) {
  std::string s(16, '0');
  for (int i = 0; i < 16; ++i) s[15 - i] = "0123456789abcdef"[(v >> (4 * i)) & 15];
  return s;
}

TEST(CapacityEmulation, GoldenFramesByteIdentical) {
  bool ok = false;
  const auto table = read_file(golden_dir() + "/capacity/frames.txt", &ok);
  ASSERT_TRUE(ok);
  std::map<std::string, std::string> expected;
  std::istringstream is(std::string(table.begin(), table.end()));
  std::string line;
  while (std::getline(is, line))
    if (!line.empty() && line[0] != '#') expected[line.substr(0, line.find(' '))] = line;
  const auto cases = cap_cases();
  ASSERT_GE(cases.size(), 15u);
  for (const CapCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto in = cap_input(c);
    const uint64_t n = in.size() / dtype_bytes(c.dtype);
    std::vector<uint8_t> out(compress_bound(c.dtype, n));
    const EmuResult r = emulate_capacity_compress(c.dtype, in.data(), n, out.data(), out.size(), kDefaultChunkLog2, c.checksum);
    ASSERT_EQ(r.status, Status::ok);
    out.resize(r.size);
    EXPECT_EQ(expected[c.name], c.name + " " + std::to_string(out.size()) + " " + hex64(hash_xxh3(out.data(), out.size())));
    const auto committed = read_file(golden_dir() + "/capacity/sz/" + c.name + ".sz", &ok);
    if (ok) EXPECT_EQ(committed, out);
    EXPECT_TRUE(matches(c.dtype, in.data(), n, c.checksum));
  }
}

// ---- sizes, dtypes, generators, alignments ----

TEST(CapacityEmulation, SizesDtypesAndGenerators) {
  const uint64_t sizes[] = {0, 1, 2, 7, 33, 1000, 65535, 65536, 65537, 3 * 65536 + 123};
  const synth::Generator gens[] = {synth::Generator::gaussian_kv, synth::Generator::heavy_tail,
                                   synth::Generator::random_bits, synth::Generator::special_values};
  int mode1 = 0, stored = 0;
  for (Dtype d : kDtypes)
    for (uint64_t n : sizes)
      for (synth::Generator g : gens) {
        const auto in = synth::generate(g, d, n, 7 + n, {});
        const bool ck = (n + static_cast<uint64_t>(g)) % 2 == 0;
        EXPECT_TRUE(matches(d, in.data(), n, ck)) << dtype_name(d) << " n " << n << " " << synth::generator_name(g);
        const Ref r = reference_cap(d, in.data(), n, ck);
        (r.frame.size() >= 64 && r.frame[49] == kModeCapacity ? mode1 : stored) += 1;
      }
  EXPECT_GE(mode1, 50);
  EXPECT_GT(stored, 10);  // n = 0, random bits
}

TEST(CapacityEmulation, UnalignedBuffers) {
  for (Dtype d : kDtypes) {
    const uint64_t n = 70001;
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 3, {});
    EXPECT_TRUE(matches(d, in.data(), n, true, 3, 5)) << dtype_name(d);
    EXPECT_TRUE(matches(d, in.data(), n, false, 1, 7)) << dtype_name(d);
  }
}

TEST(CapacityEmulation, RealKvAllDtypes) {
  int cases = 0;
  for (Dtype d : kDtypes)
    for (const RealInput& in : real_inputs(d)) {
      EXPECT_TRUE(matches(d, in.bytes.data(), in.n, true)) << in.name;
      ++cases;
    }
  EXPECT_GE(cases, 4) << "bundled data missing?";
}

// One symbol per block (0 bits per element), two symbols (1-bit codes), and
// a block using all 256 exponent values (codes up to the 12-bit limit).
TEST(CapacityEmulation, TableShapes) {
  const uint64_t n = 2 * 65536 + 10;
  std::vector<uint8_t> in(n * 2);
  std::mt19937_64 rng(5);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t e;
    if (i < 65536) e = 120;                                   // block 0: one value
    else if (i < 2 * 65536) e = 120 + (rng() % 4 == 0);       // block 1: two values
    else e = static_cast<uint32_t>(i * 37) & 0xFF;            // block 2: many values
    const uint16_t v = static_cast<uint16_t>((e << 7) | (rng() & 0x807F));
    std::memcpy(&in[2 * i], &v, 2);
  }
  EXPECT_TRUE(matches(Dtype::bf16, in.data(), n, true));
  // Skewed counts over all 256 values: package-merge hits the 12-bit limit.
  std::vector<uint8_t> sk(65536 * 2);
  for (uint64_t i = 0; i < 65536; ++i) {
    uint32_t e = 0;
    uint64_t r = rng();
    while ((r & 1) && e < 255) {
      ++e;
      r >>= 1;
      if (r == 0) r = rng();
    }
    if (i < 256) e = static_cast<uint32_t>(i);  // every value present
    const uint16_t v = static_cast<uint16_t>((e << 7) | (i & 0x7F));
    std::memcpy(&sk[2 * i], &v, 2);
  }
  EXPECT_TRUE(matches(Dtype::bf16, sk.data(), 65536, false));
}

// DST_TOO_SMALL exactly where the reference says so.
TEST(CapacityEmulation, CapacityLimits) {
  for (Dtype d : {Dtype::bf16, Dtype::fp8_e5m2}) {
    for (synth::Generator g : {synth::Generator::gaussian_kv, synth::Generator::random_bits}) {
      const uint64_t n = 100000;
      const auto in = synth::generate(g, d, n, 11, {});
      const Ref full = reference_cap(d, in.data(), n, true);
      ASSERT_EQ(full.status, Status::ok);
      for (uint64_t cap : {full.frame.size(), full.frame.size() - 1, full.frame.size() - 16, uint64_t{100}}) {
        const Ref r = reference_cap(d, in.data(), n, true, cap);
        std::vector<uint8_t> out(cap + 64, kPoison);
        const EmuResult e = emulate_capacity_compress(d, in.data(), n, out.data(), cap, kDefaultChunkLog2, true);
        EXPECT_EQ(e.status, r.status) << dtype_name(d) << " cap " << cap;
        if (r.status == Status::ok) EXPECT_TRUE(std::equal(r.frame.begin(), r.frame.end(), out.begin()));
      }
    }
  }
  // fp8_e4m3 in mode 1 (v3, FORMAT.md 4.6.7): the reference's bytes and status.
  for (uint64_t n : {uint64_t{4}, uint64_t{70001}}) {
    const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::fp8_e4m3, n, 5, {});
    const Ref r = reference_cap(Dtype::fp8_e4m3, in.data(), n, true);
    std::vector<uint8_t> out(compress_bound(Dtype::fp8_e4m3, n) + 64, kPoison);
    const EmuResult e =
        emulate_capacity_compress(Dtype::fp8_e4m3, in.data(), n, out.data(), out.size() - 64, kDefaultChunkLog2, true);
    EXPECT_EQ(e.status, r.status) << n;
    if (r.status == Status::ok) EXPECT_TRUE(std::equal(r.frame.begin(), r.frame.end(), out.begin())) << n;
  }
}

// ---- decode statuses ----

Status emu_decode_status(const std::vector<uint8_t>& frame, uint64_t cap, EmuCapDecode* e = nullptr) {
  std::vector<uint8_t> out(cap);
  const EmuCapDecode r = emulate_capacity_decompress(frame.data(), frame.size(), out.data(), cap, true);
  if (e) *e = r;
  return r.r.status;
}

TEST(CapacityEmulation, GoldenErrorVectors) {
  const std::string dir = golden_dir() + "/../golden-errors/capacity";
  bool ok = false;
  const auto list = read_file(dir + "/LIST", &ok);
  ASSERT_TRUE(ok);
  std::istringstream is(std::string(list.begin(), list.end()));
  std::string name;
  int count = 0;
  while (is >> name) {
    SCOPED_TRACE(name);
    const auto bin = read_file(dir + "/" + name + ".bin", &ok);
    ASSERT_TRUE(ok);
    const auto ex = read_file(dir + "/" + name + ".expect", &ok);
    ASSERT_TRUE(ok);
    const std::string text(ex.begin(), ex.end());
    const auto at = text.find("status = ");
    ASSERT_NE(at, std::string::npos);
    const std::string want = text.substr(at + 9, text.find('\n', at) - at - 9);
    EmuCapDecode e;
    const Status s = emu_decode_status(bin, 1 << 20, &e);
    // Frames whose header is not a valid mode-1 header are the mode-0
    // kernels' to report (the backend runs both when it cannot read the
    // header); every other vector must be this decoder's, with the
    // reference's status.
    if (e.handled) {
      EXPECT_EQ(status_name(s), want);
    } else {
      std::vector<uint8_t> out;
      EXPECT_EQ(status_name(reference_decode(bin, &out, 1 << 20).status), want);
      FrameHeader h;
      EXPECT_TRUE(parse_header(bin.data(), bin.size(), &h) != Status::ok || h.mode != kModeCapacity) << "not handled";
      EXPECT_EQ(status_name(s), status_name(parse_header(bin.data(), bin.size(), &h) != Status::ok
                                                ? parse_header(bin.data(), bin.size(), &h)
                                                : Status::unsupported_mode));
    }
    ++count;
  }
  EXPECT_GE(count, 15);
}

// Every byte (stride) of a frame changed: same status as the reference, and
// for checksum mismatches the same first corrupt block.
TEST(CapacityEmulation, CorruptFramesGiveReferenceStatuses) {
  uint64_t compared = 0, rejected = 0;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp8_e5m2}) {
    const uint64_t n = 2 * 65536 + 999;
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 21, {});
    const Ref r = reference_cap(d, in.data(), n, true);
    ASSERT_EQ(r.frame[49], kModeCapacity);
    const uint64_t bytes = n * dtype_bytes(d);
    const CapLayout L = capacity_layout_of([&] {
      FrameHeader h;
      EXPECT_EQ(parse_header(r.frame.data(), r.frame.size(), &h), Status::ok);
      return h;
    }());
    // Dense over the header, index and the tables/sizes of each block; strided elsewhere.
    std::vector<uint64_t> positions;
    for (uint64_t i = 64; i < r.frame.size(); i += (i >= L.index_off && i < L.blk_off + 200) ? 1 : 997) positions.push_back(i);
    for (uint64_t i = 0; i < 64; i += 5) positions.push_back(i);
    for (uint64_t pos : positions) {
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
        auto bad = r.frame;
        bad[pos] ^= flip;
        std::vector<uint8_t> ro;
        const FrameOutcome ref = reference_decode(bad, &ro, bytes);
        EmuCapDecode e;
        const Status s = emu_decode_status(bad, bytes, &e);
        if (!e.handled) continue;  // header no longer mode 1: the mode-0 kernels' frame
        ++compared;
        EXPECT_EQ(status_name(s), status_name(ref.status)) << dtype_name(d) << " byte " << pos << " ^ " << int(flip);
        if (ref.status == Status::checksum_mismatch) EXPECT_EQ(e.r.corrupt_block, ref.corrupt_block) << pos;
        rejected += s != Status::ok;
      }
    }
  }
  EXPECT_GT(compared, 1000u);
  EXPECT_GT(rejected, compared / 2);
}

// Rules 12-13 and a truncated source, as the reference.
TEST(CapacityEmulation, OutputLimitsAndTruncation) {
  const uint64_t n = 70000;
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 2, {});
  const Ref r = reference_cap(Dtype::bf16, in.data(), n, false);
  ASSERT_EQ(r.frame[49], kModeCapacity);
  std::vector<uint8_t> out(n * 2);
  EXPECT_EQ(emulate_capacity_decompress(r.frame.data(), r.frame.size(), out.data(), n * 2 - 1).r.status,
            Status::dst_too_small);
  EXPECT_EQ(emulate_capacity_decompress(r.frame.data(), r.frame.size(), out.data(), n * 2, true, n * 2 - 2).r.status,
            Status::limit_exceeded);
  EXPECT_EQ(emulate_capacity_decompress(r.frame.data(), r.frame.size(), nullptr, 0).r.status, Status::dst_too_small);
  EXPECT_EQ(emulate_capacity_decompress(r.frame.data(), r.frame.size() - 1, out.data(), n * 2).r.status,
            Status::truncated);
  const EmuCapDecode ok = emulate_capacity_decompress(r.frame.data(), r.frame.size(), out.data(), n * 2);
  EXPECT_EQ(ok.r.status, Status::ok);
  EXPECT_EQ(ok.r.size, n * 2);
  EXPECT_EQ(out, in);
}

}  // namespace
}  // namespace splitzip::test

// ---- table sets (FORMAT.md 4.9) ----

namespace splitzip::test {
namespace {

CapTables calibrated_set(Dtype d, uint32_t T, const std::vector<uint8_t>& sample) {
  const void* bufs[1] = {sample.data()};
  const uint64_t ns[1] = {sample.size() / dtype_bytes(d)};
  CapTables ts;
  EXPECT_EQ(cap_tables_from_samples(d, T, bufs, ns, 1, &ts), Status::ok);
  return ts;
}

std::vector<uint8_t> reference_set_frame(Dtype d, const std::vector<uint8_t>& in, const CapTables& ts, bool checksum) {
  CompressArgs a;
  a.dtype = d;
  a.n = in.size() / dtype_bytes(d);
  a.src = in.data();
  std::vector<uint8_t> out(compress_bound(d, a.n));
  a.dst = out.data();
  a.capacity = out.size();
  a.checksum = checksum;
  a.mode = Mode::capacity;
  a.tables = &ts;
  const FrameOutcome o = reference_compress(a);
  EXPECT_EQ(o.status, Status::ok);
  out.resize(o.frame_size);
  return out;
}

}  // namespace

// The kernels with a set write the reference's bytes whatever order the
// CTAs take the blocks in (kind 1 blocks, own-table fallbacks, a block of
// one value coded with the set), decode them with the set, and report
// MISSING_TABLES without it or with another set.
TEST(CapacityEmulation, TableSetsByteIdenticalInBothBlockOrders) {
  int shared = 0, own = 0;
  for (Dtype d : kDtypes)
    for (uint32_t T : {1u, 2u, 32u}) {
      const CapTables other = calibrated_set(d, T, synth::generate(synth::Generator::gaussian_kv, d, 300, 99, {}));
      for (uint64_t n : {uint64_t{1}, uint64_t{33}, uint64_t{65537}, uint64_t{2 * 65536 + 5}})
        for (auto g : {synth::Generator::gaussian_kv, synth::Generator::special_values}) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " T=" + std::to_string(T) + " n=" + std::to_string(n) + " " +
                       synth::generator_name(g));
          auto in = synth::generate(g, d, n, n + 11, {});
          if (g == synth::Generator::special_values && n > 65536)  // block 1: one value, which the set codes
            for (uint64_t i = 65536; i < n; ++i)
              std::memcpy(&in[i * dtype_bytes(d)], &in[0], dtype_bytes(d));
          const CapTables own_set = calibrated_set(d, T, in);
          for (const CapTables* ts : {&own_set, &other}) {
            const bool ck = n % 2 == 1;
            const auto want = reference_set_frame(d, in, *ts, ck);
            FrameHeader h;
            ASSERT_EQ(parse_header(want.data(), want.size(), &h), Status::ok);
            for (bool reverse : {false, true}) {
              std::vector<uint8_t> out(compress_bound(d, n) + 64, kPoison);
              const EmuResult r =
                  emulate_capacity_compress(d, in.data(), n, out.data(), compress_bound(d, n), kDefaultChunkLog2, ck,
                                            reverse, ts);
              ASSERT_EQ(r.status, Status::ok);
              ASSERT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + r.size), want) << "reverse " << reverse;
              for (uint64_t i = r.size; i < out.size(); ++i) ASSERT_EQ(out[i], kPoison) << "wrote past the frame";
            }
            if (!h.has_tables()) continue;  // stored
            const CapLayout L = capacity_layout_of(h);
            for (uint64_t b = 0, off = L.blk_off; b < L.n_blocks; off += cap_index_entry(want.data(), L, b++))
              (want[off] == kCapKindShared ? shared : own)++;
            for (bool reverse : {false, true}) {
              std::vector<uint8_t> dec(in.size(), kPoison);
              const EmuCapDecode e =
                  emulate_capacity_decompress(want.data(), want.size(), dec.data(), dec.size(), true, 0, reverse, ts);
              ASSERT_TRUE(e.handled);
              ASSERT_EQ(e.r.status, Status::ok);
              ASSERT_EQ(dec, in);
            }
            std::vector<uint8_t> dec(in.size());
            EXPECT_EQ(emulate_capacity_decompress(want.data(), want.size(), dec.data(), dec.size()).r.status,
                      Status::missing_tables);
            const CapTables* wrong = ts == &other ? &own_set : &other;
            EXPECT_EQ(emulate_capacity_decompress(want.data(), want.size(), dec.data(), dec.size(), true, 0, false,
                                                  wrong)
                          .r.status,
                      Status::missing_tables);
          }
        }
    }
  EXPECT_GT(shared, 20);
  EXPECT_GT(own, 5);
}

// A batch of buffers with one set (the kernels' batch pipeline): every
// frame is the reference's; the batch decoder gives every input back.
TEST(CapacityEmulation, TableSetsBatch) {
  for (Dtype d : kDtypes) {
    SCOPED_TRACE(dtype_name(d));
    const CapTables ts = calibrated_set(d, 4, synth::generate(synth::Generator::gaussian_kv, d, 3000, 5, {}));
    const std::vector<uint64_t> ns = {1, 4096, 65536 + 9, 0, 300};
    std::vector<std::vector<uint8_t>> ins, outs;
    std::vector<EmuEncodeItem> items;
    uint64_t total = 0;
    for (size_t i = 0; i < ns.size(); ++i) {
      ins.push_back(synth::generate(synth::Generator::gaussian_kv, d, ns[i], 20 + i, {}));
      outs.emplace_back(compress_bound(d, ns[i]));
      EmuEncodeItem it;
      it.src = ins[i].data();
      it.dst = outs[i].data();
      it.n = ns[i];
      it.capacity = outs[i].size();
      items.push_back(it);
      total += ns[i];
    }
    const auto res = emulate_capacity_compress_batch(d, items, total, kDefaultChunkLog2, true, true, &ts);
    std::vector<EmuDecodeItem> ditems;
    std::vector<std::vector<uint8_t>> backs(ns.size());
    uint64_t dst_total = 0;
    for (size_t i = 0; i < ns.size(); ++i) {
      ASSERT_EQ(res[i].status, Status::ok) << i;
      outs[i].resize(res[i].size);
      ASSERT_EQ(outs[i], reference_set_frame(d, ins[i], ts, true)) << i;
      backs[i].assign(ins[i].size(), kPoison);
      EmuDecodeItem di;
      di.src = outs[i].data();
      di.src_size = outs[i].size();
      di.dst = backs[i].data();
      di.dst_capacity = backs[i].size();
      ditems.push_back(di);
      dst_total += backs[i].size();
    }
    const auto dres = emulate_decompress_batch_async(ditems, dst_total, 0, true, true, &ts);
    for (size_t i = 0; i < ns.size(); ++i) {
      ASSERT_EQ(dres[i].status, Status::ok) << i;
      EXPECT_EQ(backs[i], ins[i]) << i;
    }
  }
}

}  // namespace splitzip::test
