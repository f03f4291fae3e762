// SPDX-License-Identifier: Apache-2.0
// Capacity mode through the stream-ordered API (cuda/api.cu): the kernel
// sequences compress_async / compress_batch_async (EncodeConfig::mode =
// capacity) and decompress_async / decompress_batch_async enqueue, run on
// the CPU by the emulators (tests/cuda/capacity_emulator.cpp after
// kernel_emulator.cpp), against the scalar reference
// (core/reference_capacity.cpp): byte-identical frames per buffer of a
// batch, exact round trips of batches mixing mode-0, stored and mode-1
// frames, and the reference's statuses for malformed mode-1 frames. The
// host side of these calls (launch counts, no sync) is
// tests/cuda/test_launch_counts.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/header.h"
#include "core/reference.h"
#include "tests/cuda/capacity_emulator.h"
#include "tests/support/backend_check.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

constexpr uint8_t kPoison = 0xCD;
constexpr uint64_t kSlack = 64;  // poisoned bytes after each destination
const Dtype kCapDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3};

FrameOutcome reference_decode(const std::vector<uint8_t>& frame, uint64_t cap) {
  std::vector<uint8_t> out(cap);
  DecompressArgs a;
  a.src = frame.data();
  a.src_size = frame.size();
  a.dst = out.data();
  a.capacity = cap;
  a.verify_checksum = true;
  return reference_decompress(a);
}

struct Input {
  Dtype d;
  std::vector<uint8_t> bytes;
  uint64_t n() const { return bytes.size() / dtype_bytes(d); }
};

// The sizes the brief asks for: empty, one element, the 64 Ki-element block
// edges, several blocks with a tail.
const uint64_t kSizes[] = {0, 1, 2, 1000, 65535, 65536, 65537, 2 * 65536, 3 * 65536 + 123};

std::vector<Input> inputs_of(Dtype d) {
  std::vector<Input> v;
  int k = 0;
  for (uint64_t n : kSizes) {
    // Mostly KV-like (mode 1), some random bits (the stored fallback).
    const auto g = ++k % 4 == 0 ? synth::Generator::random_bits : synth::Generator::gaussian_kv;
    v.push_back({d, synth::generate(g, d, n, 100 + n, {})});
  }
  return v;
}

// The batch encode of `ins` (one dtype): every frame equals the reference's,
// nothing written past it, whichever order the blocks run in.
void expect_batch_matches(Dtype d, const std::vector<Input>& ins, bool checksum) {
  std::vector<std::vector<uint8_t>> want;
  uint64_t total = 0;
  for (const Input& in : ins) {
    want.push_back(reference_frame(d, in.bytes, Mode::capacity, checksum));
    total += in.n();
  }
  for (bool reverse : {false, true}) {
    std::vector<std::vector<uint8_t>> dst;
    std::vector<EmuEncodeItem> items;
    for (const Input& in : ins) {
      const uint64_t cap = compress_bound(d, in.n());  // the API's dst_capacity contract
      dst.emplace_back(cap + kSlack, kPoison);
      EmuEncodeItem it;
      it.src = in.bytes.data();
      it.dst = dst.back().data();
      it.n = in.n();
      it.capacity = cap;
      items.push_back(it);
    }
    const auto res = emulate_capacity_compress_batch(d, items, total, kDefaultChunkLog2, checksum, reverse);
    ASSERT_EQ(res.size(), ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " n " + std::to_string(ins[i].n()) + (checksum ? " checksum" : "") +
                   (reverse ? " reverse" : ""));
      ASSERT_EQ(res[i].status, Status::ok);
      ASSERT_EQ(res[i].size, want[i].size());
      EXPECT_TRUE(std::equal(want[i].begin(), want[i].end(), dst[i].begin())) << "frame differs from the reference";
      EXPECT_TRUE(std::all_of(dst[i].begin() + res[i].size, dst[i].end(), [](uint8_t b) { return b == kPoison; }))
          << "wrote past the frame";
    }
  }
}

TEST(CapacityAsyncEmulation, SingleCallFramesEqualReference) {
  for (Dtype d : kCapDtypes)
    for (const Input& in : inputs_of(d))
      for (bool checksum : {false, true}) expect_batch_matches(d, {in}, checksum);
}

TEST(CapacityAsyncEmulation, BatchFramesEqualReference) {
  int mode1 = 0, stored = 0;
  for (Dtype d : kCapDtypes) {
    const auto ins = inputs_of(d);
    for (bool checksum : {false, true}) expect_batch_matches(d, ins, checksum);
    for (const Input& in : ins) (reference_frame(d, in.bytes, Mode::capacity, false)[49] == kModeCapacity ? mode1 : stored)++;
  }
  EXPECT_GE(mode1, 16);  // both forms are exercised (n >= 1000 of KV-like data: mode 1)
  EXPECT_GE(stored, 8);
}

TEST(CapacityAsyncEmulation, RealKvBatch) {
  for (Dtype d : kCapDtypes) {
    std::vector<Input> ins;
    for (const RealInput& r : real_inputs(d)) ins.push_back({d, r.bytes});
    if (ins.empty()) continue;
    expect_batch_matches(d, ins, true);
  }
}

// Bad items, items past the workspace's sizing and destinations too small
// fail alone, with the statuses the fast mode and the reference give.
TEST(CapacityAsyncEmulation, BatchItemsFailAlone) {
  const Dtype d = Dtype::bf16;
  const uint64_t n = 200000;  // 4 exponent blocks
  const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 9, {});
  const auto want = reference_frame(d, in, Mode::capacity, false);
  ASSERT_EQ(want[49], kModeCapacity);
  const uint64_t cap = compress_bound(d, n);
  std::vector<std::vector<uint8_t>> dst(5, std::vector<uint8_t>(cap, kPoison));
  std::vector<EmuEncodeItem> items(5);
  for (int i = 0; i < 5; ++i) items[i] = {in.data(), dst[i].data(), n, cap, {}};
  items[1].dst = nullptr;                 // bad item
  items[2].capacity = want.size() - 1;    // too small for the mode-1 frame (the stored one is larger)
  // total_elems for 3 buffers: blocks_bound = 9 + 5 = 14, so items 0, 2, 3
  // (item 1 takes no blocks) fit and item 4 (blocks 12..15) does not.
  const auto res = emulate_capacity_compress_batch(d, items, 3 * n, kDefaultChunkLog2, false);
  EXPECT_EQ(res[0].status, Status::ok);
  EXPECT_EQ(res[1].status, Status::invalid_argument);
  EXPECT_EQ(res[2].status, Status::dst_too_small);
  EXPECT_EQ(res[3].status, Status::ok);
  EXPECT_EQ(res[4].status, Status::invalid_argument);
  for (int i : {0, 3}) {
    ASSERT_EQ(res[i].size, want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), dst[i].begin())) << i;
  }
  EXPECT_EQ(res[4].size, 0u);
  EXPECT_TRUE(std::all_of(dst[4].begin(), dst[4].end(), [](uint8_t b) { return b == kPoison; }));
  // The reference's status for the small destination.
  CompressArgs a;
  a.dtype = d;
  a.n = n;
  a.src = in.data();
  std::vector<uint8_t> out(want.size() - 1);
  a.dst = out.data();
  a.capacity = out.size();
  a.mode = Mode::capacity;
  EXPECT_EQ(reference_compress(a).status, res[2].status);
}

// ---- decode ----

struct Frame {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> want;  // decoded
  std::string what;
};

// Mode 1 and its stored fallback, mode 0 (every dtype, fp8_e4m3 included),
// checksummed or not, empty frames.
std::vector<Frame> mixed_frames() {
  std::vector<Frame> v;
  int k = 0;
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e4m3})
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{65536}, uint64_t{65537}, uint64_t{150000}}) {
      ++k;
      const auto g = k % 5 == 0 ? synth::Generator::random_bits : synth::Generator::gaussian_kv;
      const auto in = synth::generate(g, d, n, 300 + n, {});
      const bool ck = k % 2 == 0;
      v.push_back({reference_frame(d, in, Mode::capacity, ck), in, std::string(dtype_name(d)) + " capacity n " + std::to_string(n)});
      v.push_back({reference_frame(d, in, Mode::fast, ck), in, std::string(dtype_name(d)) + " fast n " + std::to_string(n)});
    }
  return v;
}

std::vector<EmuResult> decode_batch(const std::vector<Frame>& frames, std::vector<std::vector<uint8_t>>* outs,
                                    bool verify, bool reverse, uint64_t total = 0) {
  std::vector<EmuDecodeItem> items;
  outs->clear();
  uint64_t sum = 0;
  for (const Frame& f : frames) outs->emplace_back(f.want.size() + kSlack, kPoison);
  for (size_t i = 0; i < frames.size(); ++i) {
    EmuDecodeItem it;
    it.src = frames[i].bytes.data();
    it.src_size = frames[i].bytes.size();
    it.dst = (*outs)[i].data();
    it.dst_capacity = frames[i].want.size();
    sum += it.dst_capacity;
    items.push_back(it);
  }
  return emulate_decompress_batch_async(items, total ? total : sum, 0, verify, reverse);
}

TEST(CapacityAsyncEmulation, MixedBatchRoundTrips) {
  const auto frames = mixed_frames();
  int mode1 = 0;
  for (const Frame& f : frames) mode1 += f.bytes[49] == kModeCapacity;
  EXPECT_GE(mode1, 8);
  // Alone, the mode-0 kernels refuse the mode-1 frames: the capacity
  // kernels' override is what decodes them.
  {
    std::vector<EmuDecodeItem> items;
    std::vector<std::vector<uint8_t>> outs;
    uint64_t sum = 0;
    for (const Frame& f : frames) outs.emplace_back(f.want.size() + 1);
    for (size_t i = 0; i < frames.size(); ++i) {
      items.push_back({frames[i].bytes.data(), frames[i].bytes.size(), outs[i].data(), frames[i].want.size()});
      sum += frames[i].want.size();
    }
    const auto mode0 = emulate_decompress_batch(items, sum, 0, true);
    for (size_t i = 0; i < frames.size(); ++i)
      EXPECT_EQ(mode0[i].status, frames[i].bytes[49] == kModeCapacity ? Status::unsupported_mode : Status::ok)
          << frames[i].what;
  }
  for (bool verify : {true, false})
    for (bool reverse : {false, true}) {
      std::vector<std::vector<uint8_t>> outs;
      const auto res = decode_batch(frames, &outs, verify, reverse);
      for (size_t i = 0; i < frames.size(); ++i) {
        SCOPED_TRACE(frames[i].what);
        ASSERT_EQ(res[i].status, Status::ok) << status_name(res[i].status);
        EXPECT_EQ(res[i].size, frames[i].want.size());
        EXPECT_TRUE(std::equal(frames[i].want.begin(), frames[i].want.end(), outs[i].begin()));
        EXPECT_TRUE(std::all_of(outs[i].begin() + frames[i].want.size(), outs[i].end(),
                                [](uint8_t b) { return b == kPoison; }));
      }
    }
  // Each frame alone (decompress_async): the same.
  for (const Frame& f : frames) {
    std::vector<std::vector<uint8_t>> outs;
    const auto res = decode_batch({f}, &outs, true, false);
    EXPECT_EQ(res[0].status, Status::ok) << f.what;
    EXPECT_TRUE(std::equal(f.want.begin(), f.want.end(), outs[0].begin())) << f.what;
  }
}

// The async capacity encode's frames decode through the async decode.
TEST(CapacityAsyncEmulation, EncodeThenDecodeBatch) {
  for (Dtype d : kCapDtypes) {
    const auto ins = inputs_of(d);
    std::vector<std::vector<uint8_t>> frames;
    std::vector<EmuEncodeItem> items;
    uint64_t total = 0;
    for (const Input& in : ins) {
      frames.emplace_back(compress_bound(d, in.n()));
      items.push_back({in.bytes.data(), frames.back().data(), in.n(), frames.back().size(), {}});
      total += in.n();
    }
    const auto enc = emulate_capacity_compress_batch(d, items, total, kDefaultChunkLog2, true);
    std::vector<Frame> fs;
    for (size_t i = 0; i < ins.size(); ++i) {
      ASSERT_EQ(enc[i].status, Status::ok);
      frames[i].resize(enc[i].size);
      fs.push_back({frames[i], ins[i].bytes, std::string(dtype_name(d)) + " n " + std::to_string(ins[i].n())});
    }
    std::vector<std::vector<uint8_t>> outs;
    const auto dec = decode_batch(fs, &outs, true, true);
    for (size_t i = 0; i < fs.size(); ++i) {
      EXPECT_EQ(dec[i].status, Status::ok) << fs[i].what;
      EXPECT_TRUE(std::equal(fs[i].want.begin(), fs[i].want.end(), outs[i].begin())) << fs[i].what;
    }
  }
}

// Every golden error vector of the capacity mode, each in a batch between
// two good frames: the async decode gives the reference's status whichever
// decoder owns the frame (no host-side mode), and the good frames decode.
TEST(CapacityAsyncEmulation, GoldenErrorVectorsInBatches) {
  const std::string dir = golden_dir() + "/../golden-errors/capacity";
  bool ok = false;
  const auto list = read_file(dir + "/LIST", &ok);
  ASSERT_TRUE(ok);
  const auto good_in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 70000, 4, {});
  const Frame good{reference_frame(Dtype::bf16, good_in, Mode::capacity, true), good_in, "good"};
  ASSERT_EQ(good.bytes[49], kModeCapacity);
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
    EXPECT_EQ(status_name(reference_decode(bin, 1 << 20).status), want);
    Frame bad{bin, std::vector<uint8_t>(1 << 20), name};
    std::vector<std::vector<uint8_t>> outs;
    const auto res = decode_batch({good, bad, good}, &outs, true, false);
    EXPECT_EQ(status_name(res[1].status), want);
    if (res[1].status != Status::ok) EXPECT_EQ(res[1].size, 0u);
    for (int i : {0, 2}) {
      EXPECT_EQ(res[i].status, Status::ok);
      EXPECT_TRUE(std::equal(good.want.begin(), good.want.end(), outs[i].begin()));
    }
    ++count;
  }
  EXPECT_GE(count, 15);
}

// Byte flips of mode-1 frames (header, index, tables, streams, checks):
// the async decode's status is the reference's whichever decoder ends up
// owning the frame, and so is the first corrupt block.
TEST(CapacityAsyncEmulation, CorruptFramesGiveReferenceStatuses) {
  uint64_t compared = 0, rejected = 0;
  for (Dtype d : {Dtype::bf16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const uint64_t n = 65536 + 777;
    const auto in = synth::generate(synth::Generator::gaussian_kv, d, n, 31, {});
    const auto frame = reference_frame(d, in, Mode::capacity, true);
    ASSERT_EQ(frame[49], kModeCapacity);
    const uint64_t bytes = n * dtype_bytes(d);
    std::vector<uint64_t> positions;
    for (uint64_t i = 0; i < frame.size(); i += i < 600 ? 3 : 401) positions.push_back(i);
    for (uint64_t pos : positions) {
      auto bad = frame;
      bad[pos] ^= 0x10;
      const FrameOutcome ref = reference_decode(bad, bytes);
      std::vector<std::vector<uint8_t>> outs;
      const auto res = decode_batch({Frame{bad, in, "bad"}}, &outs, true, false);
      ++compared;
      EXPECT_EQ(status_name(res[0].status), status_name(ref.status)) << dtype_name(d) << " byte " << pos;
      if (ref.status == Status::checksum_mismatch) EXPECT_EQ(res[0].corrupt_block, ref.corrupt_block) << pos;
      if (ref.status == Status::ok) EXPECT_TRUE(std::equal(in.begin(), in.end(), outs[0].begin())) << pos;
      rejected += res[0].status != Status::ok;
    }
  }
  EXPECT_GT(compared, 300u);
  EXPECT_GT(rejected, compared / 2);
}

// Frames past the workspace's sizing (total_dst_bytes) fail alone with
// INVALID_ARGUMENT; the ones before them decode.
TEST(CapacityAsyncEmulation, FramesPastTheWorkspaceFailAlone) {
  const uint64_t n = 200000;  // 4 exponent blocks, 400000 bytes
  const auto in = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, n, 12, {});
  const Frame f{reference_frame(Dtype::bf16, in, Mode::capacity, false), in, "f"};
  ASSERT_EQ(f.bytes[49], kModeCapacity);
  std::vector<std::vector<uint8_t>> outs;
  // total 400000 bytes: blocks_bound = 6 + 3 = 9: frames 0 and 1 (blocks
  // 0..7) fit, frame 2 does not.
  const auto res = decode_batch({f, f, f}, &outs, true, false, 400000);
  EXPECT_EQ(res[0].status, Status::ok);
  EXPECT_EQ(res[1].status, Status::ok);
  EXPECT_EQ(res[2].status, Status::invalid_argument);
  EXPECT_EQ(res[2].size, 0u);
  EXPECT_TRUE(std::equal(in.begin(), in.end(), outs[1].begin()));
}

}  // namespace
}  // namespace splitzip::test
