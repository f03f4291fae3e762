// SPDX-License-Identifier: Apache-2.0
// Conformance: round trip, equality with the reference oracle, cross-target
// decode, truncation/corruption statuses, output bounds and batch == single,
// over targets() x codec_dtypes() x sizes x threads x checksum; and the
// committed golden bytes (tests/golden/v2, tests/golden/capacity) and golden
// error vectors of the capacity mode over targets() x threads.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "core/capacity/tables.h"
#include "core/codec.h"
#include "core/hash.h"
#include "core/header.h"
#include "core/reference.h"
#include "tests/capacity/tables_golden.h"
#include "tests/conformance/targets.h"
#include "tests/support/capacity_golden.h"
#include "tests/support/golden_cases.h"
#include "tests/support/golden_errors.h"
#include "tests/support/test_data.h"

namespace splitzip::conformance {
namespace {

constexpr uint8_t kGuard = 0xA5;
constexpr uint64_t kGuardBytes = 64;

std::vector<uint8_t> make_data(Dtype d, uint64_t n, uint64_t seed) {
  const uint32_t w = dtype_bytes(d);
  std::vector<uint8_t> v(n * w);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  static const uint8_t tops[] = {0x3c, 0x3d, 0xbc, 0xbd, 0x3b, 0xbb};
  for (uint64_t i = 0; i < n; ++i) {
    for (uint32_t b = 0; b < w; ++b) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      v[i * w + b] = static_cast<uint8_t>(s >> 56);
    }
    if ((s >> 20) % 16 != 0) v[i * w + w - 1] = tops[(s >> 30) % 6];  // clustered exponents, some outliers
  }
  return v;
}

struct Frame {
  FrameOutcome out;
  std::vector<uint8_t> bytes;
};

Frame compress_with(const Backend* b, Mode m, Dtype d, const std::vector<uint8_t>& src, uint64_t n, bool checksum,
                    int threads, uint64_t capacity) {
  std::vector<uint8_t> dst(capacity + kGuardBytes, kGuard);
  CompressArgs a;
  a.dtype = d;
  a.src = src.data();
  a.n = n;
  a.dst = dst.data();
  a.capacity = capacity;
  a.checksum = checksum;
  a.threads = threads;
  a.mode = m;
  Frame f;
  f.out = b ? b->compress_frame(a) : reference_compress(a);
  for (uint64_t i = capacity; i < dst.size(); ++i) EXPECT_EQ(dst[i], kGuard) << "wrote past capacity";
  dst.resize(f.out.status == Status::ok ? f.out.frame_size : 0);
  f.bytes = std::move(dst);
  return f;
}

FrameOutcome decompress_with(const Backend* b, const std::vector<uint8_t>& frame, uint64_t src_size, uint64_t capacity,
                             std::vector<uint8_t>* out, int threads = 0, uint64_t max_output = 0) {
  out->assign(capacity + kGuardBytes, kGuard);
  DecompressArgs a;
  a.src = frame.data();
  a.src_size = src_size;
  a.dst = out->data();
  a.capacity = capacity;
  a.max_output = max_output;
  a.threads = threads;
  FrameOutcome o = b ? b->decompress_frame(a) : reference_decompress(a);
  for (uint64_t i = capacity; i < out->size(); ++i) EXPECT_EQ((*out)[i], kGuard) << "decode wrote past capacity";
  out->resize(o.status == Status::ok ? o.decoded_size : 0);
  return o;
}

struct Param {
  size_t target;
  CodecDtype cd;
};

std::string param_name(const testing::TestParamInfo<Param>& i) {
  const Mode m = i.param.cd.mode;  // a mode without a word here is named by its number
  const std::string mode = m == Mode::fast       ? "fast"
                           : m == Mode::capacity ? "capacity"
                                                 : "mode" + std::to_string(static_cast<int>(m));
  std::string s = targets()[i.param.target].name + "_" + mode + "_" +
                  dtype_name(i.param.cd.dtype);
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (size_t t = 0; t < targets().size(); ++t)
    for (CodecDtype cd : codec_dtypes()) v.push_back({t, cd});
  return v;
}

// 0, 1, odd, chunk edges (default chunk 1024 elements), over one 64 KiB checksum block.
std::vector<uint64_t> sizes(Dtype d) {
  std::vector<uint64_t> v = {0, 1, 7, 1023, 1024, 1025, 4097};
  v.push_back((uint64_t{1} << 16) / dtype_bytes(d) + 3);
  if (d == Dtype::bf16) v.push_back(300001);  // several checksum and capacity blocks
  return v;
}

class Conformance : public testing::TestWithParam<Param> {
 protected:
  const Backend* be() const { return targets()[GetParam().target].backend; }
  Mode mode() const { return GetParam().cd.mode; }
  Dtype dtype() const { return GetParam().cd.dtype; }
};

TEST_P(Conformance, RoundTripMatchesReference) {
  for (uint64_t n : sizes(dtype()))
    for (bool ck : {false, true})
      for (int th : {1, 2, 4}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " checksum=" + std::to_string(ck) + " threads=" + std::to_string(th));
        auto src = make_data(dtype(), n, n + 17);
        const uint64_t bound = compress_bound(dtype(), n);
        Frame ref = compress_with(nullptr, mode(), dtype(), src, n, ck, 1, bound);
        Frame got = compress_with(be(), mode(), dtype(), src, n, ck, th, bound);
        ASSERT_EQ(ref.out.status, Status::ok);
        ASSERT_EQ(got.out.status, Status::ok);
        ASSERT_EQ(got.bytes, ref.bytes) << "frame differs from the reference";
        std::vector<uint8_t> back;
        FrameOutcome d = decompress_with(be(), got.bytes, got.bytes.size(), src.size(), &back, th);
        ASSERT_EQ(d.status, Status::ok);
        EXPECT_EQ(d.frame_size, got.bytes.size());
        ASSERT_EQ(back, src);
      }
}

// Table sets (FORMAT.md 4.9): every target (the Kokkos backend and the
// CUDA kernels' emulator included) writes the reference's bytes at 1, 2 and
// 4 threads, for sizes with partial blocks, sets of the input (shared
// blocks) and of other data (blocks with a value the set lacks, outliers of
// make_data, take their own tables); every target decodes every frame the
// reference wrote with the set, and reports MISSING_TABLES without it or
// with only another set, writing nothing.
CapTables set_of_sample(Dtype d, uint32_t T, const std::vector<uint8_t>& sample) {
  const void* bufs[1] = {sample.data()};
  const uint64_t ns[1] = {sample.size() / dtype_bytes(d)};
  CapTables ts;
  EXPECT_EQ(cap_tables_from_samples(d, T, bufs, ns, 1, &ts), Status::ok);
  return ts;
}

Frame compress_set(const Backend* b, Dtype d, const std::vector<uint8_t>& src, const CapTables* ts, bool checksum,
                   int threads) {
  const uint64_t n = src.size() / dtype_bytes(d);
  const uint64_t capacity = compress_bound(d, n);
  std::vector<uint8_t> dst(capacity + kGuardBytes, kGuard);
  CompressArgs a;
  a.dtype = d;
  a.src = src.data();
  a.n = n;
  a.dst = dst.data();
  a.capacity = capacity;
  a.checksum = checksum;
  a.threads = threads;
  a.mode = Mode::capacity;
  a.tables = ts;
  Frame f;
  f.out = b ? b->compress_frame(a) : reference_compress(a);
  for (uint64_t i = capacity; i < dst.size(); ++i) EXPECT_EQ(dst[i], kGuard) << "wrote past capacity";
  dst.resize(f.out.status == Status::ok ? f.out.frame_size : 0);
  f.bytes = std::move(dst);
  return f;
}

FrameOutcome decompress_set(const Backend* b, const std::vector<uint8_t>& f, uint64_t capacity,
                            const CapTables* const* sets, uint64_t n_sets, std::vector<uint8_t>* out,
                            int threads = 0) {
  out->assign(capacity + kGuardBytes, kGuard);
  DecompressArgs a;
  a.src = f.data();
  a.src_size = f.size();
  a.dst = out->data();
  a.capacity = capacity;
  a.threads = threads;
  a.tables = n_sets > 0 ? sets : nullptr;
  a.n_tables = n_sets;
  const FrameOutcome o = b ? b->decompress_frame(a) : reference_decompress(a);
  for (uint64_t i = capacity; i < out->size(); ++i) EXPECT_EQ((*out)[i], kGuard) << "decode wrote past capacity";
  out->resize(o.status == Status::ok ? o.decoded_size : 0);
  return o;
}

TEST_P(Conformance, TableSetsMatchReference) {
  if (mode() != Mode::capacity) GTEST_SKIP() << "table sets are the capacity mode's";
  int shared = 0, own = 0;
  for (uint64_t n : {uint64_t{1}, uint64_t{33}, uint64_t{4097}, uint64_t{3 * 65536 + 11}}) {
    const auto src = make_data(dtype(), n, 29 + n);
    for (uint32_t T : {1u, 4u, 32u}) {
      for (bool own_sample : {true, false}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " T=" + std::to_string(T) +
                     (own_sample ? " set of this input" : " set of other data"));
        // 200 elements of other data: 5-bit dtypes lack some exponents there.
        const CapTables ts = set_of_sample(dtype(), T, own_sample ? src : make_data(dtype(), 200, 31));
        const CapTables other = set_of_sample(dtype(), T, make_data(dtype(), 777, 41));
        const CapTables* sets[2] = {&other, &ts};
        const Frame ref = compress_set(nullptr, dtype(), src, &ts, true, 1);
        ASSERT_EQ(ref.out.status, Status::ok);
        for (int th : {1, 2, 4}) {
          const Frame got = compress_set(be(), dtype(), src, &ts, true, th);
          ASSERT_EQ(got.out.status, Status::ok) << "threads " << th;
          ASSERT_EQ(got.bytes, ref.bytes) << "threads " << th;
        }
        FrameHeader h;
        ASSERT_EQ(parse_header(ref.bytes.data(), ref.bytes.size(), &h), Status::ok);
        if (!h.has_tables()) continue;  // stored: the set is not named
        const CapLayout L = capacity_layout_of(h);
        for (uint64_t b = 0, off = L.blk_off; b < L.n_blocks; off += cap_index_entry(ref.bytes.data(), L, b++))
          (ref.bytes[off] == kCapKindShared ? shared : own)++;
        std::vector<uint8_t> back;
        for (int th : {1, 2}) {
          const FrameOutcome o = decompress_set(be(), ref.bytes, src.size(), sets, 2, &back, th);
          ASSERT_EQ(o.status, Status::ok) << "threads " << th;
          EXPECT_EQ(o.frame_size, ref.bytes.size());
          ASSERT_EQ(back, src) << "threads " << th;
        }
        EXPECT_EQ(decompress_set(be(), ref.bytes, src.size(), nullptr, 0, &back).status, Status::missing_tables);
        EXPECT_EQ(decompress_set(be(), ref.bytes, src.size(), sets, 1, &back).status, Status::missing_tables);
      }
    }
  }
  EXPECT_GT(shared, 0);
  EXPECT_GT(own, 0);
}

// Every target decodes every target's TABLES frames (encode with A, decode
// with B), and a batch with one set gives the frames and values of single
// calls.
TEST_P(Conformance, TableSetsCrossTargetAndBatch) {
  if (mode() != Mode::capacity) GTEST_SKIP() << "table sets are the capacity mode's";
  const uint64_t n = 65536 + 700;
  const auto src = make_data(dtype(), n, 61);
  const CapTables ts = set_of_sample(dtype(), 8, make_data(dtype(), 5000, 62));
  const CapTables* sets[1] = {&ts};
  const Frame f = compress_set(be(), dtype(), src, &ts, false, 2);
  ASSERT_EQ(f.out.status, Status::ok);
  for (const Target& t : targets()) {
    SCOPED_TRACE("decoder " + t.name);
    std::vector<uint8_t> back;
    ASSERT_EQ(decompress_set(t.backend, f.bytes, src.size(), sets, 1, &back).status, Status::ok);
    EXPECT_EQ(back, src);
  }
  const std::vector<uint64_t> ns = {1, 1025, 5000, 65536 + 3, 77};
  std::vector<std::vector<uint8_t>> srcs, dsts;
  std::vector<CompressArgs> args(ns.size());
  for (size_t i = 0; i < ns.size(); ++i) {
    srcs.push_back(make_data(dtype(), ns[i], 70 + i));
    dsts.emplace_back(compress_bound(dtype(), ns[i]));
    args[i].dtype = dtype();
    args[i].src = srcs[i].data();
    args[i].n = ns[i];
    args[i].dst = dsts[i].data();
    args[i].capacity = dsts[i].size();
    args[i].checksum = true;
    args[i].mode = Mode::capacity;
    args[i].tables = &ts;
  }
  std::vector<FrameOutcome> out(ns.size());
  be()->compress_batch(args.data(), args.size(), 2, out.data());
  std::vector<DecompressArgs> dargs(ns.size());
  std::vector<std::vector<uint8_t>> backs(ns.size());
  for (size_t i = 0; i < ns.size(); ++i) {
    ASSERT_EQ(out[i].status, Status::ok);
    const Frame single = compress_set(nullptr, dtype(), srcs[i], &ts, true, 1);
    ASSERT_EQ(std::vector<uint8_t>(dsts[i].begin(), dsts[i].begin() + out[i].frame_size), single.bytes) << i;
    backs[i].resize(srcs[i].size());
    dargs[i].src = dsts[i].data();
    dargs[i].src_size = out[i].frame_size;
    dargs[i].dst = backs[i].data();
    dargs[i].capacity = backs[i].size();
    dargs[i].tables = sets;
    dargs[i].n_tables = 1;
  }
  std::vector<FrameOutcome> dout(ns.size());
  be()->decompress_batch(dargs.data(), dargs.size(), 2, dout.data());
  for (size_t i = 0; i < ns.size(); ++i) {
    ASSERT_EQ(dout[i].status, Status::ok) << i;
    EXPECT_EQ(backs[i], srcs[i]) << i;
  }
}

// Damaged TABLES frames: every target gives the reference's status (the
// first failing check of 4.9 / 4.6.5), never OK with other data: with the
// checksum on a flip anywhere is an error. Flips cover the kind bytes, the
// sizes and the streams of shared and own-table blocks.
TEST_P(Conformance, TableSetsCorruptionMatchesReference) {
  if (mode() != Mode::capacity) GTEST_SKIP() << "table sets are the capacity mode's";
  const uint64_t n = 2 * 65536 + 9;
  auto src = make_data(dtype(), n, 81);
  const CapTables ts = set_of_sample(dtype(), 4, make_data(dtype(), 3000, 82));
  const CapTables* sets[1] = {&ts};
  for (bool ck : {true, false}) {
    const Frame f = compress_set(nullptr, dtype(), src, &ts, ck, 1);
    ASSERT_EQ(f.out.status, Status::ok);
    FrameHeader h;
    ASSERT_EQ(parse_header(f.bytes.data(), f.bytes.size(), &h), Status::ok);
    ASSERT_TRUE(h.has_tables());
    const CapLayout L = capacity_layout_of(h);
    std::vector<uint64_t> at;
    for (uint64_t b = 0, off = L.blk_off; b < L.n_blocks; off += cap_index_entry(f.bytes.data(), L, b++))
      for (uint64_t k : {0, 1, 2, 3, 40, 64, 65, 66, 100, 1000})
        if (k < cap_index_entry(f.bytes.data(), L, b)) at.push_back(off + k);
    for (uint64_t p = L.blk_off; p < L.blk_off + L.blk_size; p += 1 + L.blk_size / 61) at.push_back(p);
    for (uint64_t p = L.index_off; p < L.index_off + L.index_size; ++p) at.push_back(p);
    int errors = 0;
    for (uint64_t p : at)
      for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
        SCOPED_TRACE("checksum=" + std::to_string(ck) + " byte " + std::to_string(p) + " ^" + std::to_string(flip));
        auto bad = f.bytes;
        bad[p] ^= flip;
        std::vector<uint8_t> a, b;
        const FrameOutcome r = decompress_set(nullptr, bad, src.size(), sets, 1, &a);
        const FrameOutcome g = decompress_set(be(), bad, src.size(), sets, 1, &b, 2);
        ASSERT_EQ(g.status, r.status);
        if (ck) EXPECT_NE(r.status, Status::ok);
        if (g.status == Status::ok) EXPECT_EQ(b, a);
        errors += g.status != Status::ok;
      }
    EXPECT_GT(errors, 0);
  }
}

TEST_P(Conformance, CrossTargetDecode) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1025}, uint64_t{40000}}) {
    auto src = make_data(dtype(), n, 3);
    Frame f = compress_with(be(), mode(), dtype(), src, n, true, 0, compress_bound(dtype(), n));
    ASSERT_EQ(f.out.status, Status::ok);
    for (const Target& t : targets()) {
      SCOPED_TRACE("decoder " + t.name + " n=" + std::to_string(n));
      std::vector<uint8_t> back;
      ASSERT_EQ(decompress_with(t.backend, f.bytes, f.bytes.size(), src.size(), &back).status, Status::ok);
      EXPECT_EQ(back, src);
    }
  }
}

TEST_P(Conformance, CorruptionStatusesMatchReference) {
  const uint64_t n = (uint64_t{1} << 17) / dtype_bytes(dtype()) + 5;  // three checksum blocks
  auto src = make_data(dtype(), n, 9);
  Frame f = compress_with(nullptr, mode(), dtype(), src, n, true, 1, compress_bound(dtype(), n));
  ASSERT_EQ(f.out.status, Status::ok);
  std::vector<uint8_t> a, b;
  // Truncation at several points.
  for (uint64_t cut : {uint64_t{0}, uint64_t{10}, uint64_t{63}, uint64_t{64}, f.bytes.size() / 2, f.bytes.size() - 1}) {
    FrameOutcome r = decompress_with(nullptr, f.bytes, cut, src.size(), &a);
    FrameOutcome g = decompress_with(be(), f.bytes, cut, src.size(), &b);
    EXPECT_EQ(g.status, r.status) << "cut=" << cut;
  }
  // Single flipped bytes across the frame.
  for (uint64_t pos = 0; pos < f.bytes.size(); pos += 1 + f.bytes.size() / 97) {
    auto bad = f.bytes;
    bad[pos] ^= 0x5a;
    FrameOutcome r = decompress_with(nullptr, bad, bad.size(), src.size(), &a);
    FrameOutcome g = decompress_with(be(), bad, bad.size(), src.size(), &b);
    EXPECT_EQ(g.status, r.status) << "pos=" << pos;
    EXPECT_EQ(g.corrupt_block, r.corrupt_block) << "pos=" << pos;
  }
}

TEST_P(Conformance, BoundsMatchReference) {
  for (uint64_t n : {uint64_t{1}, uint64_t{1025}, uint64_t{20000}}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto src = make_data(dtype(), n, 5);
    Frame ok = compress_with(be(), mode(), dtype(), src, n, true, 0, compress_bound(dtype(), n));
    ASSERT_EQ(ok.out.status, Status::ok);
    const uint64_t size = ok.bytes.size();
    for (uint64_t cap : {size, size - 1, uint64_t{64}, uint64_t{0}}) {
      Frame r = compress_with(nullptr, mode(), dtype(), src, n, true, 1, cap);
      Frame g = compress_with(be(), mode(), dtype(), src, n, true, 0, cap);
      EXPECT_EQ(g.out.status, r.out.status) << "cap=" << cap;
      if (r.out.status == Status::ok) EXPECT_EQ(g.bytes, r.bytes);
    }
    std::vector<uint8_t> a, b;
    for (uint64_t cap : {uint64_t(src.size()), uint64_t(src.size() - 1)}) {
      EXPECT_EQ(decompress_with(be(), ok.bytes, size, cap, &b).status,
                decompress_with(nullptr, ok.bytes, size, cap, &a).status)
          << "dst cap=" << cap;
    }
    EXPECT_EQ(decompress_with(be(), ok.bytes, size, src.size(), &b, 0, src.size() - 1).status,
              decompress_with(nullptr, ok.bytes, size, src.size(), &a, 0, src.size() - 1).status)
        << "max_output";
  }
}

TEST_P(Conformance, BatchEqualsSingles) {
  const std::vector<uint64_t> ns = {0, 1, 1025, 5000, 77};
  std::vector<std::vector<uint8_t>> srcs, dsts;
  std::vector<CompressArgs> args(ns.size());
  for (size_t i = 0; i < ns.size(); ++i) {
    srcs.push_back(make_data(dtype(), ns[i], i));
    dsts.emplace_back(compress_bound(dtype(), ns[i]));
    args[i].dtype = dtype();
    args[i].src = srcs[i].data();
    args[i].n = ns[i];
    args[i].dst = dsts[i].data();
    args[i].capacity = dsts[i].size();
    args[i].checksum = true;
    args[i].mode = mode();
  }
  for (int th : {1, 2}) {
    std::vector<FrameOutcome> out(ns.size());
    be()->compress_batch(args.data(), args.size(), th, out.data());
    std::vector<DecompressArgs> dargs(ns.size());
    std::vector<std::vector<uint8_t>> backs(ns.size());
    for (size_t i = 0; i < ns.size(); ++i) {
      ASSERT_EQ(out[i].status, Status::ok);
      Frame single = compress_with(be(), mode(), dtype(), srcs[i], ns[i], true, 0, dsts[i].size());
      std::vector<uint8_t> got(dsts[i].begin(), dsts[i].begin() + out[i].frame_size);
      ASSERT_EQ(got, single.bytes) << "item " << i;
      backs[i].resize(srcs[i].size());
      dargs[i].src = dsts[i].data();
      dargs[i].src_size = out[i].frame_size;
      dargs[i].dst = backs[i].data();
      dargs[i].capacity = backs[i].size();
    }
    std::vector<FrameOutcome> dout(ns.size());
    be()->decompress_batch(dargs.data(), dargs.size(), th, dout.data());
    for (size_t i = 0; i < ns.size(); ++i) {
      ASSERT_EQ(dout[i].status, Status::ok);
      EXPECT_EQ(backs[i], srcs[i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, Conformance, testing::ValuesIn(all_params()), param_name);

// ---- golden vectors on every target and thread count ----

class ConformanceGolden : public testing::TestWithParam<size_t> {
 protected:
  const Backend* be() const { return targets()[GetParam()].backend; }
};

std::string target_name(const testing::TestParamInfo<size_t>& i) {
  std::string s = targets()[i.param].name;
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

std::vector<size_t> target_indices() {
  std::vector<size_t> v;
  for (size_t t = 0; t < targets().size(); ++t) v.push_back(t);
  return v;
}

constexpr int kThreadCounts[] = {1, 2, 4};

// Every v2 case: the target's frame equals frames.txt (size, xxh64) and the
// committed .sz where there is one, and decodes back.
TEST_P(ConformanceGolden, V2BytesAtEveryThreadCount) {
  std::string err;
  const auto cases = test::golden_cases(&err, test::kGoldenV2);
  ASSERT_FALSE(cases.empty()) << err;
  bool ok = false;
  const auto frames = test::golden_frames(&ok, test::kGoldenV2);
  ASSERT_TRUE(ok);
  for (const auto& c : cases) {
    const test::GoldenFrame* want = nullptr;
    for (const auto& f : frames)
      if (f.name == c.name) want = &f;
    ASSERT_NE(want, nullptr) << c.name;
    const auto input = test::golden_input(c);
    Codebook cb;
    const CompressOptions o = test::golden_options(c, &cb);
    bool have_sz = false;
    const auto committed = test::read_file(test::golden_sz_path(c.name, test::kGoldenV2), &have_sz);
    for (int th : kThreadCounts) {
      SCOPED_TRACE(c.name + " threads=" + std::to_string(th));
      std::vector<uint8_t> dst(compress_bound(c.dtype, c.n));
      CompressArgs a;
      a.dtype = c.dtype;
      a.src = input.data();
      a.n = c.n;
      a.dst = dst.data();
      a.capacity = dst.size();
      a.codebook = o.codebook;
      a.chunk_log2 = o.chunk_log2;
      a.checksum = o.checksum;
      a.mode = o.mode;
      a.threads = th;
      const FrameOutcome r = be()->compress_frame(a);
      ASSERT_EQ(r.status, Status::ok);
      dst.resize(r.frame_size);
      ASSERT_EQ(dst.size(), want->size);
      ASSERT_EQ(xxh64(dst.data(), dst.size()), want->hash);
      if (have_sz) ASSERT_EQ(dst, committed);
      std::vector<uint8_t> back;
      ASSERT_EQ(decompress_with(be(), dst, dst.size(), input.size(), &back, th).status, Status::ok);
      ASSERT_EQ(back, input);
    }
  }
}

// Every capacity case: the target's frame has the committed frames.txt line.
TEST_P(ConformanceGolden, CapacityBytesAtEveryThreadCount) {
  for (const std::string& dir : test::capacity_golden_dirs()) {  // v2, and v3 fp8_e4m3 (FORMAT.md 4.6.7)
  bool ok = false;
  const auto cases = test::capacity_golden_cases(&ok, dir);
  ASSERT_TRUE(ok) << dir;
  ASSERT_FALSE(cases.empty()) << dir;
  const auto lines = test::capacity_golden_frames(dir);
  for (const auto& c : cases) {
    const auto input = test::capacity_golden_input(c, &ok);
    ASSERT_TRUE(ok) << c.name;
    for (int th : kThreadCounts) {
      SCOPED_TRACE(c.name + " threads=" + std::to_string(th));
      Frame f = compress_with(be(), Mode::capacity, c.dtype, input, c.n, c.checksum, th, compress_bound(c.dtype, c.n));
      ASSERT_EQ(f.out.status, Status::ok);
      const auto it = lines.find(c.name);
      ASSERT_NE(it, lines.end());
      EXPECT_EQ(test::capacity_golden_line(c.name, f.bytes), it->second);
      std::vector<uint8_t> back;
      ASSERT_EQ(decompress_with(be(), f.bytes, f.bytes.size(), input.size(), &back, th).status, Status::ok);
      ASSERT_EQ(back, input);
    }
  }
  }
}

// Every golden error vector (v1, v2, capacity) whose api decodes one frame
// gives its status and corrupt_block on the target (a non-reference target
// may give one of the "also" statuses of a multi-fault frame).
TEST_P(ConformanceGolden, ErrorVectorsAtEveryThreadCount) {
  std::string err;
  const auto vectors = test::golden_error_vectors(&err);
  ASSERT_EQ(err, "");
  int replayed = 0;
  const bool is_ref = std::string(be()->name()) == "reference";
  for (const auto& v : vectors) {
    if (v.key("api", "decompress") != "decompress") continue;  // frame_info and streams: the reliability suite
    Status want;
    ASSERT_TRUE(test::parse_status_name(v.key("status", ""), &want)) << v.name;
    std::vector<Status> also;
    std::istringstream alts(v.key("also", ""));
    for (std::string a; alts >> a;) {
      Status s;
      ASSERT_TRUE(test::parse_status_name(a, &s)) << v.name << ": " << a;
      also.push_back(s);
    }
    const std::string block = v.key("corrupt_block", "");
    const uint64_t want_block = block.empty() || block == "none" ? kNoBlock : std::stoull(block);
    FrameInfo fi;
    const bool header_ok = frame_info(v.bytes.data(), v.bytes.size(), &fi) == Status::ok;
    const std::string cap_key = v.key("dst_capacity", "decoded");
    const uint64_t cap = cap_key == "decoded" ? (header_ok ? fi.decoded_size : 64) : std::stoull(cap_key);
    ++replayed;
    for (int th : kThreadCounts) {
      SCOPED_TRACE(v.name + " threads=" + std::to_string(th));
      std::vector<uint8_t> out(cap + kGuardBytes, kGuard);
      DecompressArgs a;
      a.src = v.bytes.data();
      a.src_size = v.bytes.size();
      a.dst = out.data();
      a.capacity = cap;
      a.max_output = std::stoull(v.key("max_output_bytes", "0"));
      a.verify_checksum = v.key("verify_checksum", "1") != "0";
      a.threads = th;
      const FrameOutcome o = be()->decompress_frame(a);
      for (uint64_t i = cap; i < out.size(); ++i) ASSERT_EQ(out[i], kGuard) << "decode wrote past capacity";
      bool ok = o.status == want;
      if (!is_ref)
        for (Status s : also) ok |= o.status == s;
      EXPECT_TRUE(ok) << "got " << status_name(o.status) << ", expected " << status_name(want);
      if (!block.empty() && o.status == want) EXPECT_EQ(o.corrupt_block, want_block);
    }
  }
  EXPECT_GE(replayed, 60);
}

// The committed table-set frames (tests/golden/v3_tables, FORMAT.md 4.9)
// on every target and thread count, and the golden-error vectors of
// tests/golden-errors/v3_tables with their sets.
TEST_P(ConformanceGolden, TableSetVectorsAtEveryThreadCount) {
  bool ok = false;
  const auto t = test::read_file(tables_golden::dir() + "/frames.txt", &ok);
  ASSERT_TRUE(ok);
  const std::string table(t.begin(), t.end());
  for (const auto& c : tables_golden::cases()) {
    const CapTables ts = tables_golden::set_of(c);
    const CapTables* sets[1] = {&ts};
    const auto in = tables_golden::input(c);
    for (int th : kThreadCounts) {
      SCOPED_TRACE(std::string(c.name) + " threads=" + std::to_string(th));
      const Frame f = compress_set(be(), c.dtype, in, &ts, c.checksum, th);
      ASSERT_EQ(f.out.status, Status::ok);
      EXPECT_NE(table.find(tables_golden::line(c.name, f.bytes) + "\n"), std::string::npos);
      std::vector<uint8_t> back;
      ASSERT_EQ(decompress_set(be(), f.bytes, in.size(), sets, 1, &back, th).status, Status::ok);
      ASSERT_EQ(back, in);
    }
  }
  for (const auto& f : tables_golden::faults()) {
    const auto frame = test::read_file(tables_golden::errors_dir() + "/" + f.name + ".sz", &ok);
    ASSERT_TRUE(ok) << f.name;
    for (const auto& c : tables_golden::cases()) {
      if (std::string(c.name) != f.base) continue;
      const CapTables ts = tables_golden::set_of(c);
      const CapTables* sets[1] = {&ts};
      for (int th : kThreadCounts) {
        SCOPED_TRACE(std::string(f.name) + " threads=" + std::to_string(th));
        std::vector<uint8_t> out;
        EXPECT_EQ(decompress_set(be(), frame, c.n * dtype_bytes(c.dtype), sets, f.given ? 1 : 0, &out, th).status,
                  f.want);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ConformanceGolden, testing::ValuesIn(target_indices()), target_name);

// A backend skipped here is a failure, not a smaller suite.
TEST(ConformanceTargets, EveryAvailableBackendIsATarget) {
  size_t available = 0;
  for (size_t i = 0; i < registry_size(); ++i)
    if (registry_at(i)->available() && registry_at(i)->accepts(MemoryKind::host)) ++available;
  EXPECT_EQ(registry_target_count(), available);
  EXPECT_EQ(targets().size(), available + 1);  // + the CUDA kernel emulator
  EXPECT_EQ(targets().back().name, "cuda-emulator");
  EXPECT_EQ(all_params().size(), targets().size() * codec_dtypes().size());
  EXPECT_EQ(codec_dtypes().size(), 2 * kDtypeCount);  // each mode takes every dtype (fp8_e4m3 mode 1: v3)
}

}  // namespace
}  // namespace splitzip::conformance
