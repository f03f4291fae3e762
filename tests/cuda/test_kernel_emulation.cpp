// SPDX-License-Identifier: Apache-2.0
// The CUDA kernels' per-thread logic, run on the CPU by the emulator
// (kernel_emulator.h), against the scalar reference: byte-identical frames,
// identical decoded bytes, identical statuses on corrupt frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/header.h"
#include "core/reference.h"
#include "cuda/encode_logic.h"
#include "tests/cuda/kernel_emulator.h"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

constexpr uint8_t kPoison = 0xCD;

Codebook dynamic_codebook(Dtype dtype, const void* src, uint64_t n) {
  Histogram h(dtype);
  h.add(src, n);
  Codebook cb = h.codebook();
  if (cb.count == 0) {  // n == 0: any valid codebook
    cb.count = 1;
    cb.entries[0] = 1;
  }
  return cb;
}

std::vector<uint8_t> reference_frame(Dtype dtype, const void* src, uint64_t n, const Codebook& cb,
                                     uint32_t chunk_log2, bool checksum) {
  std::vector<uint8_t> frame(compress_bound(dtype, n));
  CompressOptions o;
  o.backend = "reference";
  o.codebook = &cb;
  o.chunk_log2 = chunk_log2;
  o.checksum = checksum;
  const Result r = compress(dtype, src, n, frame.data(), frame.size(), o);
  EXPECT_EQ(r.status, Status::ok);
  frame.resize(r.size);
  return frame;
}

// Emulated GPU frame for (src, n) must equal the reference frame; src and
// dst are placed at the given byte offsets to exercise unaligned paths.
::testing::AssertionResult encode_matches(Dtype dtype, const void* src, uint64_t n, const Codebook& cb,
                                          uint32_t chunk_log2, bool checksum = false, uint32_t src_off = 0,
                                          uint32_t dst_off = 0) {
  const uint64_t bytes = n * dtype_bytes(dtype);
  std::vector<uint8_t> in(bytes + src_off + 16);
  if (bytes) std::memcpy(in.data() + src_off, src, bytes);
  const uint64_t cap = compress_bound(dtype, n);
  std::vector<uint8_t> out(cap + dst_off + 64, kPoison);
  const EmuResult r = emulate_compress(dtype, in.data() + src_off, n, out.data() + dst_off, cap, cb, chunk_log2,
                                       checksum);
  if (r.status != Status::ok) return ::testing::AssertionFailure() << "emulated encode: " << status_name(r.status);
  const std::vector<uint8_t> want = reference_frame(dtype, src, n, cb, chunk_log2, checksum);
  auto same = bytes_equal(out.data() + dst_off, r.size, want.data(), want.size());
  if (!same) return ::testing::AssertionFailure() << "frame differs from reference: " << same.message();
  for (uint64_t i = dst_off + r.size; i < out.size(); ++i)
    if (out[i] != kPoison) return ::testing::AssertionFailure() << "wrote past the frame at " << i - dst_off;
  for (uint32_t i = 0; i < dst_off; ++i)
    if (out[i] != kPoison) return ::testing::AssertionFailure() << "wrote before the frame";

  // Decode the reference frame with the emulated decoder (unaligned too).
  std::vector<uint8_t> fr(want.size() + src_off);
  std::memcpy(fr.data() + src_off, want.data(), want.size());
  std::vector<uint8_t> dec(bytes + dst_off + 16, kPoison);
  const EmuResult d = emulate_decompress(fr.data() + src_off, want.size(), dec.data() + dst_off, bytes);
  if (d.status != Status::ok) return ::testing::AssertionFailure() << "emulated decode: " << status_name(d.status);
  if (d.size != bytes) return ::testing::AssertionFailure() << "decoded size " << d.size;
  auto eq = bytes_equal(dec.data() + dst_off, bytes, src, bytes);
  if (!eq) return ::testing::AssertionFailure() << "decoded bytes differ: " << eq.message();
  return ::testing::AssertionSuccess();
}

const Dtype kDtypes[] = {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2};

TEST(KernelEmulation, RealKvAllDtypes) {
  int cases = 0;
  for (Dtype d : kDtypes) {
    for (const RealInput& in : real_inputs(d)) {
      const Codebook cb = dynamic_codebook(d, in.bytes.data(), in.n);
      EXPECT_TRUE(encode_matches(d, in.bytes.data(), in.n, cb, 10)) << in.name;
      ++cases;
    }
  }
  EXPECT_GE(cases, 4) << "bundled data missing?";
}

TEST(KernelEmulation, SyntheticGeneratorsAndChunkSizes) {
  using synth::Generator;
  const Generator gens[] = {Generator::gaussian_kv, Generator::heavy_tail, Generator::all_escape,
                            Generator::random_bits, Generator::special_values, Generator::exponent_shift};
  for (Dtype d : kDtypes) {
    for (Generator g : gens) {
      synth::Params p;
      p.escape_rate = 0.03;
      const uint64_t n = 70000 + static_cast<uint64_t>(g) * 1111;
      const auto data = synth::generate(g, d, n, 42 + static_cast<uint64_t>(g), p);
      ASSERT_EQ(data.size(), n * dtype_bytes(d));
      const Codebook dyn = dynamic_codebook(d, data.data(), n);
      const Codebook body = synth::body_codebook(d);
      for (uint32_t cl : {6u, 10u, 15u}) {
        EXPECT_TRUE(encode_matches(d, data.data(), n, dyn, cl)) << dtype_name(d) << " " << synth::generator_name(g) << " cl " << cl;
      }
      EXPECT_TRUE(encode_matches(d, data.data(), n, body, 12)) << dtype_name(d) << " " << synth::generator_name(g) << " body";
    }
  }
}

// A codebook of K entries turns the rest of a real distribution into
// escapes: from escape-rich coded frames up to the stored fallback.
TEST(KernelEmulation, SmallCodebooksFromCodedToStored) {
  for (Dtype d : kDtypes) {
    const auto inputs = real_inputs(d);
    ASSERT_FALSE(inputs.empty());
    const RealInput& in = inputs.front();
    const uint64_t n = std::min<uint64_t>(in.n, 100003);
    const Codebook full = dynamic_codebook(d, in.bytes.data(), n);
    for (uint8_t k : {uint8_t{1}, uint8_t{2}, uint8_t{3}, uint8_t{4}, uint8_t{6}, uint8_t{8}, uint8_t{12}}) {
      if (k > full.count) continue;
      Codebook cb = full;
      cb.count = k;
      for (int i = k; i < 16; ++i) cb.entries[i] = 0;
      EXPECT_TRUE(encode_matches(d, in.bytes.data(), n, cb, 10)) << dtype_name(d) << " K=" << int(k);
    }
  }
}

TEST(KernelEmulation, EdgeSizesAroundGroupsChunksAndTiles) {
  const uint64_t sizes[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 255, 256, 257,
                            1023, 1024, 1025, 4095, 4097, 32767, 32768, 32769, 65535, 65536, 65537,
                            3 * 32768 + 5};
  for (Dtype d : kDtypes) {
    synth::Params p;
    p.escape_rate = 0.02;
    const auto data = synth::generate(synth::Generator::heavy_tail, d, 3 * 32768 + 5, 9, p);
    for (uint64_t n : sizes) {
      const Codebook cb = synth::body_codebook(d);
      for (uint32_t cl : {6u, 15u}) EXPECT_TRUE(encode_matches(d, data.data(), n, cb, cl)) << dtype_name(d) << " n " << n;
    }
  }
}

TEST(KernelEmulation, UnalignedBuffersAndChecksum) {
  for (Dtype d : kDtypes) {
    const auto data = synth::generate(synth::Generator::gaussian_kv, d, 40000, 5);
    const Codebook cb = dynamic_codebook(d, data.data(), 40000);
    for (uint32_t so : {0u, 1u, 2u, 8u}) {
      for (uint32_t dof : {0u, 1u, 4u}) {
        EXPECT_TRUE(encode_matches(d, data.data(), 40000, cb, 10, so == 2, so, dof))
            << dtype_name(d) << " src+" << so << " dst+" << dof;
      }
    }
  }
}

TEST(KernelEmulation, TileOrderDoesNotChangeFrames) {
  const auto data = synth::generate(synth::Generator::heavy_tail, Dtype::bf16, 5 * 32768 + 77, 3);
  const Codebook cb = synth::body_codebook(Dtype::bf16);
  const uint64_t n = 5 * 32768 + 77;
  const uint64_t cap = compress_bound(Dtype::bf16, n);
  std::vector<uint8_t> a(cap, 1), b(cap, 2);
  EmuEncodeItem it;
  it.src = data.data();
  it.n = n;
  it.capacity = cap;
  it.codebook = cb;
  it.dst = a.data();
  const auto ra = emulate_compress_batch(Dtype::bf16, {it}, n, 10, false, false);
  it.dst = b.data();
  const auto rb = emulate_compress_batch(Dtype::bf16, {it}, n, 10, false, true);
  ASSERT_EQ(ra[0].status, Status::ok);
  ASSERT_EQ(ra[0].size, rb[0].size);
  EXPECT_TRUE(bytes_equal(a.data(), ra[0].size, b.data(), rb[0].size));
}

// compress_batch_async's pipeline: many buffers sharing one workspace,
// per-item statuses for bad items, each frame equal to its reference.
TEST(KernelEmulation, BatchEncodeWithBadItems) {
  const Dtype d = Dtype::bf16;
  const uint64_t ns[] = {100000, 0, 1, 32768, 5000, 70001, 64, 250000};
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::vector<EmuEncodeItem> items;
  uint64_t total = 0;
  for (uint64_t k = 0; k < std::size(ns); ++k) {
    synth::Params p;
    p.escape_rate = 0.005 * static_cast<double>(k);
    inputs.push_back(synth::generate(synth::Generator::heavy_tail, d, ns[k], 100 + k, p));
    outputs.emplace_back(compress_bound(d, ns[k]) + 32, kPoison);
    EmuEncodeItem it;
    it.src = inputs.back().data();
    it.n = ns[k];
    it.capacity = compress_bound(d, ns[k]);
    it.codebook = synth::body_codebook(d);
    items.push_back(it);
    total += ns[k];
  }
  for (size_t k = 0; k < items.size(); ++k) items[k].dst = outputs[k].data();
  items[2].capacity = 10;           // too small
  items[4].src = nullptr;           // bad pointer
  items[5].codebook.entries[3] = items[5].codebook.entries[4];  // duplicate entry
  for (bool reverse : {false, true}) {
    const auto res = emulate_compress_batch(d, items, total, 10, false, reverse);
    ASSERT_EQ(res.size(), items.size());
    EXPECT_EQ(res[2].status, Status::dst_too_small);
    EXPECT_EQ(res[4].status, Status::invalid_argument);
    EXPECT_EQ(res[5].status, Status::bad_codebook);
    for (size_t k : {0u, 1u, 3u, 6u, 7u}) {
      ASSERT_EQ(res[k].status, Status::ok) << k;
      const auto want = reference_frame(d, inputs[k].data(), ns[k], items[k].codebook, 10, false);
      EXPECT_TRUE(bytes_equal(outputs[k].data(), res[k].size, want.data(), want.size())) << "item " << k;
    }
  }
  // A total below the real sum: the items past the workspace's sizing fail
  // alone, the rest still match.
  const auto res = emulate_compress_batch(d, items, 120000, 10, false);
  EXPECT_EQ(res[0].status, Status::ok);
  EXPECT_EQ(res[7].status, Status::invalid_argument);
}

// The fused encode kernel's per-buffer finalize (by the CTA that completes
// the buffer's last tile, in whatever order tiles finish) and its copy
// phase, over a batch mixing multi-tile coded buffers, escape overflow ->
// stored fallback (multi-tile), a buffer stored by plan (capacity below any
// coded frame) that still has tiles for its block hashes, empty and
// one-element buffers: every frame equals the reference's, with and without
// the checksum, tiles in either order, nothing written past a frame.
TEST(KernelEmulation, FusedEncodeBatchCodedStoredChecksumAnyOrder) {
  for (Dtype d : kDtypes) {
    const uint64_t eb = dtype_bytes(d);
    struct Case {
      uint64_t n;
      synth::Generator g;
      bool tight;  // capacity = stored frame size: no escape budget at all
    };
    const Case cases[] = {{3 * 32768 + 5, synth::Generator::heavy_tail, false},
                          {2 * 32768 + 77, synth::Generator::random_bits, false},  // overflow -> stored
                          {0, synth::Generator::heavy_tail, false},
                          {1, synth::Generator::heavy_tail, false},
                          {40000, synth::Generator::gaussian_kv, true},
                          {32768, synth::Generator::heavy_tail, false},
                          {5 * 32768 + 3, synth::Generator::all_escape, false}};  // overflow -> stored
    for (bool checksum : {false, true}) {
      std::vector<std::vector<uint8_t>> inputs, outputs;
      std::vector<EmuEncodeItem> items;
      uint64_t total = 0;
      for (size_t k = 0; k < std::size(cases); ++k) {
        synth::Params p;
        p.escape_rate = 0.01;
        inputs.push_back(synth::generate(cases[k].g, d, cases[k].n, 500 + k, p));
        const uint64_t cap = cases[k].tight
                                 ? stored_frame_size(static_cast<uint32_t>(d), cases[k].n,
                                                     checksum ? checksum_blocks(cases[k].n * eb) : 0)
                                 : compress_bound(d, cases[k].n);
        outputs.emplace_back(cap + 64, kPoison);
        EmuEncodeItem it;
        it.src = inputs.back().data();
        it.n = cases[k].n;
        it.capacity = cap;
        it.codebook = synth::body_codebook(d);
        items.push_back(it);
        total += cases[k].n;
      }
      for (size_t k = 0; k < items.size(); ++k) items[k].dst = outputs[k].data();
      for (bool reverse : {false, true}) {
        for (auto& o : outputs) std::fill(o.begin(), o.end(), kPoison);
        const auto res = emulate_compress_batch(d, items, total, 10, checksum, reverse);
        uint64_t stored = 0;
        for (size_t k = 0; k < items.size(); ++k) {
          SCOPED_TRACE(std::string(dtype_name(d)) + " item " + std::to_string(k) + (checksum ? " checksum" : "") +
                       (reverse ? " reverse" : ""));
          ASSERT_EQ(res[k].status, Status::ok);
          std::vector<uint8_t> want(items[k].capacity);
          CompressOptions o;
          o.backend = "reference";
          o.codebook = &items[k].codebook;
          o.chunk_log2 = 10;
          o.checksum = checksum;
          const Result r = compress(d, inputs[k].data(), cases[k].n, want.data(), want.size(), o);
          ASSERT_EQ(r.status, Status::ok);
          EXPECT_TRUE(bytes_equal(outputs[k].data(), res[k].size, want.data(), r.size));
          for (uint64_t i = res[k].size; i < outputs[k].size(); ++i)
            ASSERT_EQ(outputs[k][i], kPoison) << "wrote past the frame at " << i;
          FrameHeader h;
          ASSERT_EQ(parse_header(want.data(), r.size, &h), Status::ok);
          stored += h.stored() && cases[k].n > 0;
        }
        EXPECT_GE(stored, 3u) << "the batch must exercise the stored fallback";
      }
    }
  }
}

// ---------------------------------------------------------------- decode

Status reference_decode_status(const std::vector<uint8_t>& frame, uint64_t size, uint64_t cap,
                               std::vector<uint8_t>* out, uint64_t limit = 0) {
  DecompressOptions o;
  o.backend = "reference";
  o.max_output_bytes = limit;
  out->assign(cap, 0);
  return decompress(frame.data(), size, out->data(), cap, o).status;
}

// Every corruption of a frame: emulated decoder status == reference status,
// and identical output when both accept. Returns the number of statuses
// that were not ok (to show the test exercised rejections).
uint64_t compare_corruptions(const std::vector<uint8_t>& frame, uint64_t out_bytes, uint64_t stride,
                             uint64_t seed) {
  uint64_t rejected = 0;
  for (uint64_t pos = 0; pos < frame.size(); pos += stride) {
    for (uint32_t k = 0; k < 2; ++k) {
      std::vector<uint8_t> bad = frame;
      const uint64_t r = synth::random_u64(seed, pos * 2 + k);
      bad[pos] = static_cast<uint8_t>(k == 0 ? bad[pos] ^ (1u << (r % 8)) : r);
      std::vector<uint8_t> want;
      const Status sr = reference_decode_status(bad, bad.size(), out_bytes, &want);
      std::vector<uint8_t> got(out_bytes, kPoison);
      const EmuResult e = emulate_decompress(bad.data(), bad.size(), got.data(), out_bytes);
      EXPECT_EQ(e.status, sr) << "byte " << pos << " of " << frame.size() << " -> " << int(bad[pos]);
      if (e.status != sr) return rejected;
      if (sr == Status::ok) {
        EXPECT_TRUE(bytes_equal(got.data(), e.size, want.data(), out_bytes)) << "byte " << pos;
      } else {
        ++rejected;
      }
    }
  }
  return rejected;
}

TEST(KernelEmulation, CorruptFramesGiveReferenceStatuses) {
  uint64_t rejected = 0;
  for (Dtype d : kDtypes) {
    synth::Params p;
    p.escape_rate = 0.02;
    for (uint64_t n : {uint64_t{1}, uint64_t{77}, uint64_t{1000}, uint64_t{40001}}) {
      const auto data = synth::generate(synth::Generator::heavy_tail, d, n, 21, p);
      for (bool checksum : {false, true}) {
        const auto frame = reference_frame(d, data.data(), n, synth::body_codebook(d), 6, checksum);
        // Every byte of small frames; a sample of the 40001-element ones.
        const uint64_t stride = frame.size() < 4000 ? 1 : 61;
        rejected += compare_corruptions(frame, n * dtype_bytes(d), stride, n + checksum);
      }
    }
  }
  EXPECT_GT(rejected, 1000u);
}

TEST(KernelEmulation, TruncatedLimitedAndSmallDestinations) {
  const Dtype d = Dtype::fp16;
  const uint64_t n = 5000;
  const auto data = synth::generate(synth::Generator::gaussian_kv, d, n, 4);
  const auto frame = reference_frame(d, data.data(), n, dynamic_codebook(d, data.data(), n), 10, true);
  const uint64_t bytes = n * 2;
  for (uint64_t size : {uint64_t{0}, uint64_t{10}, uint64_t{63}, uint64_t{64}, frame.size() - 1, frame.size()}) {
    std::vector<uint8_t> want, got(bytes);
    const Status sr = reference_decode_status(frame, size, bytes, &want);
    EXPECT_EQ(emulate_decompress(frame.data(), size, got.data(), bytes).status, sr) << size;
  }
  std::vector<uint8_t> want, got(bytes);
  EXPECT_EQ(emulate_decompress(frame.data(), frame.size(), got.data(), bytes - 1).status,
            reference_decode_status(frame, frame.size(), bytes - 1, &want));
  EXPECT_EQ(emulate_decompress(frame.data(), frame.size(), got.data(), bytes, true, bytes - 2).status,
            reference_decode_status(frame, frame.size(), bytes, &want, bytes - 2));
  EXPECT_EQ(emulate_decompress(frame.data(), frame.size(), nullptr, 0).status, Status::dst_too_small);
}

// decompress_batch_async's pipeline: mixed dtypes (dtype-major tiles),
// stored and coded frames, bad frames among good ones, any tile order.
TEST(KernelEmulation, BatchDecodeMixedDtypes) {
  std::vector<std::vector<uint8_t>> inputs, frames, outs;
  std::vector<Dtype> dts;
  std::vector<EmuDecodeItem> items;
  uint64_t total = 0;
  for (uint64_t k = 0; k < 10; ++k) {
    const Dtype d = kDtypes[k % 4];
    const uint64_t n = 1 + synth::random_u64(77, k) % 150000;
    synth::Params p;
    p.escape_rate = 0.01;
    const synth::Generator g = k == 6 ? synth::Generator::random_bits : synth::Generator::heavy_tail;
    inputs.push_back(synth::generate(g, d, n, k, p));
    frames.push_back(reference_frame(d, inputs.back().data(), n, synth::body_codebook(d), 10, k % 3 == 0));
    outs.emplace_back(n * dtype_bytes(d), kPoison);
    dts.push_back(d);
    total += n * dtype_bytes(d);
  }
  for (size_t k = 0; k < frames.size(); ++k) {
    EmuDecodeItem it;
    it.src = frames[k].data();
    it.src_size = frames[k].size();
    it.dst = outs[k].data();
    it.dst_capacity = outs[k].size();
    items.push_back(it);
  }
  items[3].src_size = 50;  // truncated
  // A changed residual byte: still a valid frame without a checksum (k = 8),
  // decoded to the reference's (changed) output.
  frames[8][70] ^= 0x40;   // corrupt payload (after the header)
  for (bool reverse : {false, true}) {
    const auto res = emulate_decompress_batch(items, total, 0, true, reverse);
    for (size_t k = 0; k < items.size(); ++k) {
      std::vector<uint8_t> want;
      const Status sr = reference_decode_status(frames[k], items[k].src_size, outs[k].size(), &want);
      ASSERT_EQ(res[k].status, sr) << "frame " << k;
      if (sr == Status::ok) {
        EXPECT_TRUE(bytes_equal(outs[k].data(), res[k].size, want.data(), want.size())) << k;
      }
    }
    EXPECT_EQ(res[3].status, Status::truncated);
  }
}

// The v2 block checksum through the kernels' split (per-tile block hashes,
// frame checksum over them, stream 7): frames equal the reference's for one
// element, exactly one block, many blocks and a short last block, every
// dtype; a changed output byte is reported at the reference's block.
TEST(KernelEmulation, BlockChecksumFramesAndFirstCorruptBlock) {
  for (Dtype d : kDtypes) {
    const uint64_t eb = dtype_bytes(d);
    const uint64_t blk = uint64_t{1} << 16;
    for (uint64_t bytes : {eb, blk, 3 * blk, 3 * blk + 40 * eb, 5 * blk + 8 * eb}) {
      const uint64_t n = bytes / eb;
      synth::Params p;
      p.escape_rate = 0.001;
      const auto data = synth::generate(synth::Generator::heavy_tail, d, n, 33, p);
      const Codebook cb = synth::body_codebook(d);
      ASSERT_TRUE(encode_matches(d, data.data(), n, cb, 10, true)) << dtype_name(d) << " n " << n;
      const auto frame = reference_frame(d, data.data(), n, cb, 10, true);
      FrameHeader h;
      ASSERT_EQ(parse_header(frame.data(), frame.size(), &h), Status::ok);
      if (h.stored() || layout_of(h).res_size == 0 || n < 2) continue;
      // Change the residual byte of an element in the last block.
      const FrameLayout L = layout_of(h);
      const uint64_t elem = n - 2;
      std::vector<uint8_t> bad = frame;
      bad[L.res_off + elem * L.res_size / n] ^= 0x01;
      std::vector<uint8_t> want(bytes), got(bytes);
      DecompressOptions o;
      o.backend = "reference";
      const Result rr = decompress(bad.data(), bad.size(), want.data(), bytes, o);
      ASSERT_EQ(rr.status, Status::checksum_mismatch);
      EXPECT_EQ(rr.corrupt_block, elem * eb / blk);
      const EmuResult e = emulate_decompress(bad.data(), bad.size(), got.data(), bytes);
      EXPECT_EQ(e.status, Status::checksum_mismatch) << dtype_name(d) << " n " << n;
      EXPECT_EQ(e.corrupt_block, rr.corrupt_block) << dtype_name(d) << " n " << n;
    }
  }
}

// Dynamic calibration's parallel top-16 (codebook_kernel: one thread per
// exponent, each computing its rank) equals the serial selection of the
// format core on random, tied, sparse and fp8-range histograms.
TEST(KernelEmulation, ParallelTop16EqualsSerialSelection) {
  std::mt19937_64 rng(123);
  for (int trial = 0; trial < 2000; ++trial) {
    uint64_t counts[256] = {};
    const int mode = trial % 5;
    const uint32_t span = mode == 4 ? 32 : 256;  // fp8 exponents stay below 32
    const int used = static_cast<int>(rng() % (mode == 2 ? 20 : span + 1));
    for (int k = 0; k < used; ++k) {
      const uint32_t e = static_cast<uint32_t>(rng() % span);
      counts[e] = mode == 1 ? 1 + rng() % 3 : (mode == 3 ? uint64_t{1} << 40 : 1 + rng() % 100000);  // 1, 3: ties
    }
    uint8_t want[16];
    const uint32_t want_count = top16_codebook(counts, want);
    uint8_t got[16] = {};
    uint32_t nonzero = 0;
    for (uint32_t e = 0; e < 256; ++e) {  // the 256 threads
      const uint32_t r = cuda_detail::top16_rank(counts, e);
      if (r < 16) got[r] = static_cast<uint8_t>(e);
      nonzero += counts[e] != 0;
    }
    const uint32_t got_count = nonzero < 16 ? nonzero : 16;
    ASSERT_EQ(got_count, want_count) << trial;
    ASSERT_EQ(std::memcmp(got, want, 16), 0) << trial;
  }
}

}  // namespace
}  // namespace splitzip::test
