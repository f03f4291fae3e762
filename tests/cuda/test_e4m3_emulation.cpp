// SPDX-License-Identifier: Apache-2.0
// fp8_e4m3 (FORMAT.md 4.7) through the CUDA kernels' per-thread logic, run
// on the CPU by the emulator (kernel_emulator.h): frames byte-identical to
// the reference on the committed goldens (tests/golden/e4m3), on KV-like,
// uniform and real data (f32 KV cast to E4M3 the way vLLM does) of sizes
// around groups, tiles and checksum blocks; every byte value round-trips;
// corrupt frames give the reference's status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/header.h"
#include "tests/support/e4m3_data.h"
#include "tests/cuda/kernel_emulator.h"
#include "tests/support/compare.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

constexpr Dtype kE4M3 = Dtype::fp8_e4m3;
constexpr uint8_t kPoison = 0xCD;

// The bundled f32 KV tensors cast to E4M3 (per-tensor scale amax/448).
std::vector<std::vector<uint8_t>> real_e4m3() {
  std::vector<std::vector<uint8_t>> out;
  for (const RealInput& in : real_inputs(Dtype::fp32)) {
    std::vector<float> f(in.n);
    std::memcpy(f.data(), in.bytes.data(), in.n * 4);
    out.push_back(e4m3_scaled(f.data(), in.n));
  }
  return out;
}

std::vector<uint8_t> kv_bytes(uint64_t n, uint64_t seed, uint32_t far_percent = 4) {
  return e4m3_kv_bytes(n, seed, far_percent);
}
std::vector<uint8_t> uniform_bytes(uint64_t n, uint64_t seed) { return e4m3_uniform_bytes(n, seed); }

struct Lcg {
  uint64_t s;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
};

Codebook dynamic_codebook(const uint8_t* src, uint64_t n) {
  Histogram h(kE4M3);
  h.add(src, n);
  Codebook cb = h.codebook();
  if (cb.count == 0) {  // n == 0: any valid codebook
    cb.count = 1;
    cb.entries[0] = 7;
  }
  return cb;
}

std::vector<uint8_t> reference_frame(const uint8_t* src, uint64_t n, const Codebook& cb, uint32_t chunk_log2,
                                     bool checksum) {
  std::vector<uint8_t> frame(compress_bound(kE4M3, n));
  CompressOptions o;
  o.backend = "reference";
  o.codebook = &cb;
  o.chunk_log2 = chunk_log2;
  o.checksum = checksum;
  const Result r = compress(kE4M3, src, n, frame.data(), frame.size(), o);
  EXPECT_EQ(r.status, Status::ok);
  frame.resize(r.size);
  return frame;
}

// The emulated decode of `frame` must give `want` (n bytes); src and dst at
// the given offsets.
::testing::AssertionResult decode_gives(const std::vector<uint8_t>& frame, const uint8_t* want, uint64_t n,
                                        uint32_t src_off = 0, uint32_t dst_off = 0, bool verify = true) {
  std::vector<uint8_t> fr(frame.size() + src_off);
  std::memcpy(fr.data() + src_off, frame.data(), frame.size());
  std::vector<uint8_t> dec(n + dst_off + 16, kPoison);
  const EmuResult d = emulate_decompress(fr.data() + src_off, frame.size(), dec.data() + dst_off, n, verify);
  if (d.status != Status::ok) return ::testing::AssertionFailure() << "emulated decode: " << status_name(d.status);
  if (d.size != n) return ::testing::AssertionFailure() << "decoded size " << d.size;
  auto eq = bytes_equal(dec.data() + dst_off, n, want, n);
  if (!eq) return ::testing::AssertionFailure() << "decoded bytes differ: " << eq.message();
  for (uint64_t i = dst_off + n; i < dec.size(); ++i)
    if (dec[i] != kPoison) return ::testing::AssertionFailure() << "decode wrote past the output";
  return ::testing::AssertionSuccess();
}

// Emulated frame == reference frame, nothing written outside it, and the
// emulated decoder gives the input back.
::testing::AssertionResult encode_matches(const uint8_t* src, uint64_t n, const Codebook& cb, uint32_t chunk_log2,
                                          bool checksum = false, uint32_t src_off = 0, uint32_t dst_off = 0,
                                          bool* coded = nullptr) {
  std::vector<uint8_t> in(n + src_off + 16);
  if (n) std::memcpy(in.data() + src_off, src, n);
  const uint64_t cap = compress_bound(kE4M3, n);
  std::vector<uint8_t> out(cap + dst_off + 64, kPoison);
  const EmuResult r =
      emulate_compress(kE4M3, in.data() + src_off, n, out.data() + dst_off, cap, cb, chunk_log2, checksum);
  if (r.status != Status::ok) return ::testing::AssertionFailure() << "emulated encode: " << status_name(r.status);
  const std::vector<uint8_t> want = reference_frame(src, n, cb, chunk_log2, checksum);
  auto same = bytes_equal(out.data() + dst_off, r.size, want.data(), want.size());
  if (!same) return ::testing::AssertionFailure() << "frame differs from reference: " << same.message();
  for (uint64_t i = dst_off + r.size; i < out.size(); ++i)
    if (out[i] != kPoison) return ::testing::AssertionFailure() << "wrote past the frame at " << i - dst_off;
  for (uint32_t i = 0; i < dst_off; ++i)
    if (out[i] != kPoison) return ::testing::AssertionFailure() << "wrote before the frame";
  if (coded != nullptr) {
    FrameHeader h;
    if (parse_header(want.data(), want.size(), &h) != Status::ok) return ::testing::AssertionFailure() << "header";
    *coded = !h.stored();
  }
  return decode_gives(want, src, n, src_off, dst_off);
}

// The committed e4m3 goldens without a tensor section: the emulated encoder
// (codebook and settings from the golden's header; a stored frame's from
// its case) writes the golden bytes, and the emulated decoder decodes
// the golden to the reference's output.
TEST(E4M3Emulation, CommittedGoldensByteIdentical) {
  namespace fs = std::filesystem;
  const std::string dir = golden_dir() + "/e4m3";
  int checked = 0, coded = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("e4m3_", 0) != 0 || entry.path().extension() != ".sz") continue;
    SCOPED_TRACE(name);
    bool ok = false;
    const std::vector<uint8_t> golden = read_file(entry.path().string(), &ok);
    ASSERT_TRUE(ok);
    FrameHeader h;
    ASSERT_EQ(parse_header(golden.data(), golden.size(), &h), Status::ok);
    ASSERT_EQ(h.dtype, 5u);
    const uint64_t n = h.n_elems;
    std::vector<uint8_t> input(n);
    DecompressOptions dopt;
    dopt.backend = "reference";
    ASSERT_EQ(decompress(golden.data(), golden.size(), input.data(), n, dopt).status, Status::ok);
    Codebook cb;
    if (h.stored()) {  // the codebook of the case (tests/core/test_golden_e4m3.cpp)
      cb = dynamic_codebook(input.data(), n);
      if (name == "e4m3_codebook3.sz") {
        cb.count = 3;
        cb.entries[0] = 7;
        cb.entries[1] = 6;
        cb.entries[2] = 8;
        for (int i = 3; i < 16; ++i) cb.entries[i] = 0;
      }
    } else {
      cb.dtype = kE4M3;
      cb.count = h.codebook_count;
      std::memcpy(cb.entries, h.codebook, 16);
      ++coded;
    }
    const bool checksum = (h.flags & kFlagChecksum) != 0;
    std::vector<uint8_t> out(compress_bound(kE4M3, n) + 32, kPoison);
    const EmuResult r = emulate_compress(kE4M3, input.data(), n, out.data(), out.size(), cb, h.chunk_log2, checksum);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_TRUE(bytes_equal(out.data(), r.size, golden.data(), golden.size()));
    EXPECT_TRUE(decode_gives(golden, input.data(), n));
    EXPECT_TRUE(decode_gives(golden, input.data(), n, 3, 5));
    ++checked;
  }
  EXPECT_GE(checked, 5);
  EXPECT_GE(coded, 3);
}

// Every byte value (NaN 0x7F/0xFF, +-0, subnormals, +-448): coded frames
// with every codebook size, the dynamic codebook, and the stored fallback.
TEST(E4M3Emulation, EveryByteValueRoundTrips) {
  std::vector<uint8_t> all;
  for (int rep = 0; rep < 3; ++rep)
    for (int b = 0; b < 256; ++b) all.push_back(static_cast<uint8_t>(b));
  const auto kv = kv_bytes(20000, 11);
  std::vector<uint8_t> mixed(kv);
  mixed.insert(mixed.begin() + 777, all.begin(), all.end());  // every value, then KV data that can be coded
  int coded_frames = 0;
  for (uint32_t k = 1; k <= 7; ++k) {
    Codebook cb = dynamic_codebook(mixed.data(), mixed.size());
    cb.count = static_cast<uint8_t>(k);
    for (uint32_t i = k; i < 16; ++i) cb.entries[i] = 0;
    for (bool checksum : {false, true}) {
      bool coded = false;
      EXPECT_TRUE(encode_matches(mixed.data(), mixed.size(), cb, 10, checksum, 0, 0, &coded)) << "K=" << k;
      coded_frames += coded;
    }
  }
  EXPECT_GE(coded_frames, 6);
  // Only the 256 values (escape-heavy: stored), and with a codebook that
  // has every value's exponent count.
  bool coded = true;
  EXPECT_TRUE(encode_matches(all.data(), all.size(), dynamic_codebook(all.data(), all.size()), 10, true, 0, 0, &coded));
  EXPECT_FALSE(coded);
}

// Sizes around 8-element groups, 16-element kernel groups, 32768-element
// tiles and 65536-byte checksum blocks, several chunk settings (which do
// not change the layout but must be carried in the header).
TEST(E4M3Emulation, EdgeSizesKvUniformChecksum) {
  const auto kv = kv_bytes(3 * 32768 + 5, 21);
  const uint64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 33, 63, 64, 65, 255, 1023, 1025,
                            4097, 32767, 32768, 32769, 65535, 65536, 65537, 3 * 32768 + 5};
  int coded_frames = 0;
  for (uint64_t n : sizes) {
    const Codebook cb = dynamic_codebook(kv.data(), n);
    for (uint32_t cl : {6u, 15u}) {
      bool coded = false;
      EXPECT_TRUE(encode_matches(kv.data(), n, cb, cl, cl == 15, 0, 0, &coded)) << "n " << n << " cl " << cl;
      coded_frames += coded;
    }
  }
  EXPECT_GE(coded_frames, 20);
  const auto uni = uniform_bytes(70001, 5);  // ~9/16 escapes: stored
  for (uint64_t n : {uint64_t{1}, uint64_t{17}, uint64_t{70001}})
    for (bool checksum : {false, true})
      EXPECT_TRUE(encode_matches(uni.data(), n, dynamic_codebook(uni.data(), n), 10, checksum)) << "uniform n " << n;
}

// Escape rates from none to past the stored threshold (about E < n/4):
// markers straddling kernel groups, tiles and the staging budget.
TEST(E4M3Emulation, EscapeRatesUpToStoredFallback) {
  int coded_frames = 0, stored_frames = 0;
  for (uint32_t far : {0u, 2u, 10u, 20u, 30u, 60u}) {
    const uint64_t n = 2 * 32768 + 1001;
    const auto v = kv_bytes(n, 100 + far, far);
    Codebook cb;  // 4 entries: every exponent outside {5..8} escapes
    cb.dtype = kE4M3;
    cb.count = 4;
    cb.entries[0] = 6;
    cb.entries[1] = 8;
    cb.entries[2] = 5;
    cb.entries[3] = 9;
    for (bool checksum : {false, true}) {
      bool coded = false;
      EXPECT_TRUE(encode_matches(v.data(), n, cb, 10, checksum, 0, 0, &coded)) << "far " << far;
      coded ? ++coded_frames : ++stored_frames;
    }
  }
  EXPECT_GE(coded_frames, 2);
  EXPECT_GE(stored_frames, 2);
}

TEST(E4M3Emulation, RealKvCastToE4M3) {
  int n_inputs = 0;
  for (const auto& v : real_e4m3()) {
    const Codebook cb = dynamic_codebook(v.data(), v.size());
    bool coded = false;
    EXPECT_TRUE(encode_matches(v.data(), v.size(), cb, 10, true, 0, 0, &coded));
    EXPECT_TRUE(coded) << "real KV in E4M3 codes at about 1.11";
    EXPECT_TRUE(encode_matches(v.data(), v.size() - 3, cb, 10, false, 1, 3));
    ++n_inputs;
  }
  EXPECT_GE(n_inputs, 2) << "bundled data missing?";
}

TEST(E4M3Emulation, UnalignedBuffersAndTileOrder) {
  const auto v = kv_bytes(5 * 32768 + 77, 8);
  const Codebook cb = dynamic_codebook(v.data(), v.size());
  for (uint32_t so : {0u, 1u, 5u})
    for (uint32_t dof : {0u, 3u}) EXPECT_TRUE(encode_matches(v.data(), 40003, cb, 10, so == 1, so, dof)) << so << dof;
  const uint64_t n = v.size(), cap = compress_bound(kE4M3, n);
  std::vector<uint8_t> a(cap, 1), b(cap, 2);
  EmuEncodeItem it;
  it.src = v.data();
  it.n = n;
  it.capacity = cap;
  it.codebook = cb;
  it.dst = a.data();
  const auto ra = emulate_compress_batch(kE4M3, {it}, n, 10, true, false);
  it.dst = b.data();
  const auto rb = emulate_compress_batch(kE4M3, {it}, n, 10, true, true);
  ASSERT_EQ(ra[0].status, Status::ok);
  ASSERT_EQ(ra[0].size, rb[0].size);
  EXPECT_TRUE(bytes_equal(a.data(), ra[0].size, b.data(), rb[0].size));
}

// A batch of coded and stored e4m3 buffers sharing one workspace (staging
// prefixes, copy units) and a batch decode mixing them with other dtypes.
TEST(E4M3Emulation, BatchEncodeAndMixedBatchDecode) {
  const uint64_t ns[] = {70001, 0, 1, 32768, 999, 100000};
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::vector<EmuEncodeItem> items;
  uint64_t total = 0;
  for (size_t k = 0; k < std::size(ns); ++k) {
    inputs.push_back(k == 4 ? uniform_bytes(ns[k], k) : kv_bytes(ns[k], 40 + k));
    outputs.emplace_back(compress_bound(kE4M3, ns[k]) + 32, kPoison);
    EmuEncodeItem it;
    it.src = inputs.back().data();
    it.n = ns[k];
    it.capacity = compress_bound(kE4M3, ns[k]);
    it.codebook = dynamic_codebook(kv_bytes(5000, 1).data(), 5000);
    items.push_back(it);
    total += ns[k];
  }
  for (size_t k = 0; k < items.size(); ++k) items[k].dst = outputs[k].data();
  std::vector<std::vector<uint8_t>> frames;
  for (bool reverse : {false, true}) {
    frames.clear();
    const auto res = emulate_compress_batch(kE4M3, items, total, 10, true, reverse);
    for (size_t k = 0; k < items.size(); ++k) {
      ASSERT_EQ(res[k].status, Status::ok) << k;
      const auto want = reference_frame(inputs[k].data(), ns[k], items[k].codebook, 10, true);
      EXPECT_TRUE(bytes_equal(outputs[k].data(), res[k].size, want.data(), want.size())) << "item " << k;
      for (uint64_t i = res[k].size; i < outputs[k].size(); ++i) ASSERT_EQ(outputs[k][i], kPoison) << k;
      frames.push_back(want);
    }
  }
  // Decode batch: the e4m3 frames and a bf16 frame between them.
  std::vector<uint8_t> bf(2 * 5000);
  for (size_t i = 0; i < bf.size(); ++i) bf[i] = static_cast<uint8_t>(i % 2 ? 0x3F : i * 7);
  std::vector<uint8_t> bf_frame(compress_bound(Dtype::bf16, 5000));
  const Result rb = compress(Dtype::bf16, bf.data(), 5000, bf_frame.data(), bf_frame.size());
  ASSERT_EQ(rb.status, Status::ok);
  bf_frame.resize(rb.size);
  frames.insert(frames.begin() + 2, bf_frame);
  inputs.insert(inputs.begin() + 2, bf);
  std::vector<std::vector<uint8_t>> outs;
  std::vector<EmuDecodeItem> ditems;
  uint64_t dtotal = 0;
  for (size_t k = 0; k < frames.size(); ++k) outs.emplace_back(inputs[k].size(), kPoison);
  for (size_t k = 0; k < frames.size(); ++k) {
    EmuDecodeItem it;
    it.src = frames[k].data();
    it.src_size = frames[k].size();
    it.dst = outs[k].data();
    it.dst_capacity = outs[k].size();
    ditems.push_back(it);
    dtotal += outs[k].size();
  }
  for (bool reverse : {false, true}) {
    const auto res = emulate_decompress_batch(ditems, dtotal, 0, true, reverse);
    for (size_t k = 0; k < frames.size(); ++k) {
      ASSERT_EQ(res[k].status, Status::ok) << k;
      EXPECT_TRUE(bytes_equal(outs[k].data(), res[k].size, inputs[k].data(), inputs[k].size())) << k;
    }
  }
}

// Every corruption of small frames (and a sample of a two-tile one): the
// emulated decoder's status equals the reference's (rules 14, 15, 17, 18 in
// the reference's order, rule 19 with the checksum), outputs equal when
// both accept.
TEST(E4M3Emulation, CorruptFramesGiveReferenceStatuses) {
  uint64_t rejected = 0;
  std::vector<Status> seen;
  for (uint64_t n : {uint64_t{1}, uint64_t{9}, uint64_t{77}, uint64_t{1001}, uint64_t{40001}}) {
    const auto v = kv_bytes(n, 60 + n, 8);
    Codebook cb = dynamic_codebook(v.data(), n);
    if (cb.count > 5) cb.count = 5;  // codes 5, 6 invalid: rule 18 reachable
    for (uint32_t i = cb.count; i < 16; ++i) cb.entries[i] = 0;
    for (bool checksum : {false, true}) {
      const auto frame = reference_frame(v.data(), n, cb, 10, checksum);
      const uint64_t stride = frame.size() < 4000 ? 1 : 37;
      for (uint64_t pos = 0; pos < frame.size(); pos += stride) {
        for (uint32_t k = 0; k < 2; ++k) {
          std::vector<uint8_t> bad = frame;
          Lcg g{pos * 2 + k + n};
          const uint32_t r = g.next();
          bad[pos] = static_cast<uint8_t>(k == 0 ? bad[pos] ^ (1u << (r % 8)) : r >> 5);
          std::vector<uint8_t> want(n + 1, 0), got(n + 1, kPoison);
          DecompressOptions o;
          o.backend = "reference";
          const Status sr = decompress(bad.data(), bad.size(), want.data(), n, o).status;
          const EmuResult e = emulate_decompress(bad.data(), bad.size(), got.data(), n);
          ASSERT_EQ(e.status, sr) << "n " << n << " byte " << pos << " of " << frame.size() << " -> " << int(bad[pos]);
          if (sr == Status::ok) {
            EXPECT_TRUE(bytes_equal(got.data(), n, want.data(), n)) << "byte " << pos;
          } else {
            ++rejected;
            if (std::find(seen.begin(), seen.end(), sr) == seen.end()) seen.push_back(sr);
          }
        }
      }
    }
  }
  EXPECT_GT(rejected, 1000u);
  for (Status s : {Status::bad_padding, Status::bad_escape_counts, Status::bad_escape_value, Status::bad_code,
                   Status::checksum_mismatch})
    EXPECT_NE(std::find(seen.begin(), seen.end(), s), seen.end()) << status_name(s) << " never reached";
}

}  // namespace
}  // namespace splitzip::test
