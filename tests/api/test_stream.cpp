// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/pipeline_model.h"
#include "tests/support/compare.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"
#include "transfer/stream.h"

namespace splitzip::stream {
namespace {

using test::bytes_equal;

// Moves every frame from encoder to decoder the way a transport would:
// copy into a free receive slot, then submit. Returns the first error.
Status pump(StreamEncoder& enc, StreamDecoder& dec) {
  for (;;) {
    EncodedFrame f;
    bool done = false;
    Status s = enc.next(&f, &done);
    if (s != Status::ok) return s;
    if (done) break;
    uint32_t slot;
    s = dec.acquire(&slot);
    if (s != Status::ok) return s;
    std::memcpy(dec.slot_data(slot), f.data, f.size);
    enc.release(f.slot);
    s = dec.submit(slot, f.size, f.out_offset, f.raw_bytes);
    if (s != Status::ok) return s;
  }
  return dec.finish();
}

std::vector<uint8_t> concat(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST(PlanFrames, SplitsEachTensorAndKeepsOffsets) {
  const uint64_t elems[] = {10, 0, 25, 8};
  std::vector<FrameSpan> plan;
  ASSERT_EQ(plan_frames(Dtype::bf16, elems, 4, 8, &plan), Status::ok);
  // 10 -> 8+2, 0 -> none, 25 -> 8+8+8+1, 8 -> 8
  ASSERT_EQ(plan.size(), 7u);
  EXPECT_EQ(plan[0].tensor, 0u);
  EXPECT_EQ(plan[1].n_elems, 2u);
  EXPECT_EQ(plan[1].out_offset, 16u);
  EXPECT_EQ(plan[2].tensor, 2u);
  EXPECT_EQ(plan[2].out_offset, 20u);
  EXPECT_EQ(plan[5].n_elems, 1u);
  EXPECT_EQ(plan[5].first_elem, 24u);
  EXPECT_EQ(plan[6].tensor, 3u);
  EXPECT_EQ(plan[6].out_offset, 70u);
  uint64_t total = 0;
  for (const auto& f : plan) total += f.n_elems;
  EXPECT_EQ(total, 43u);
}

TEST(PlanFrames, RejectsBadArguments) {
  const uint64_t elems[] = {4};
  std::vector<FrameSpan> plan;
  EXPECT_EQ(plan_frames(Dtype::bf16, elems, 1, 0, &plan), Status::invalid_argument);
  EXPECT_EQ(plan_frames(static_cast<Dtype>(9), elems, 1, 4, &plan), Status::invalid_argument);
  EXPECT_EQ(plan_frames(Dtype::bf16, nullptr, 1, 4, &plan), Status::invalid_argument);
  EXPECT_EQ(plan_frames(Dtype::bf16, elems, 1, 4, nullptr), Status::invalid_argument);
  const uint64_t huge[] = {UINT64_MAX / 2, UINT64_MAX / 2};
  EXPECT_EQ(plan_frames(Dtype::fp32, huge, 2, kMaxElems, &plan), Status::limit_exceeded);
}

TEST(Stream, SyntheticLayersRoundTripBitExact) {
  // Uneven per-layer sizes so frames end mid-ring and tensors end mid-frame.
  std::vector<std::vector<uint8_t>> layers;
  const uint64_t sizes[] = {100000, 7, 65536, 33333, 0, 150001};
  for (size_t i = 0; i < 6; ++i)
    layers.push_back(synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, sizes[i], 40 + i));
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < layers.size(); ++i) tensors.push_back({layers[i].data(), sizes[i]});
  const std::vector<uint8_t> want = concat(layers);

  CompressOptions co;
  co.threads = 1;
  StreamEncoder enc(Dtype::bf16, tensors, 16384, 2, co);
  ASSERT_EQ(enc.start(), Status::ok);
  std::vector<uint8_t> got(want.size(), 0xAB);
  StreamDecoder dec(got.data(), got.size(), 3, enc.slot_capacity());
  ASSERT_EQ(dec.start(), Status::ok);
  ASSERT_EQ(pump(enc, dec), Status::ok);
  EXPECT_TRUE(bytes_equal(got, want));
  const StageStats es = enc.stats(), ds = dec.stats();
  EXPECT_EQ(es.frames, enc.plan().size());
  EXPECT_EQ(ds.frames, enc.plan().size());
  EXPECT_EQ(es.raw_bytes, want.size());
  EXPECT_EQ(ds.coded_bytes, es.coded_bytes);
  // Gaussian KV compresses.
  EXPECT_LT(es.coded_bytes, es.raw_bytes);
  // Memory bound: the ring is slots * slot capacity, far below the payload.
  EXPECT_EQ(enc.ring_bytes(), 2 * enc.slot_capacity());
  EXPECT_LT(enc.ring_bytes(), want.size() / 4);
}

// Whole tensors per frame (the transfer example's case when layers are
// smaller than a frame) and chunk-aligned frames, without a checksum: only
// the byte comparison can catch a wrong decode.
class RealKvFrames : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RealKvFrames, RoundTripBitExact) {
  std::vector<std::vector<uint8_t>> layers;
  for (const std::string& name : test::bf16_data_files()) {
    bool ok = false;
    layers.push_back(test::load_data_file(name, &ok));
    ASSERT_TRUE(ok) << name;
  }
  std::vector<Tensor> tensors;
  for (auto& l : layers) tensors.push_back({l.data(), l.size() / 2});
  const std::vector<uint8_t> want = concat(layers);
  CompressOptions co;
  co.threads = 1;
  co.backend = backend_available("cpu") ? "cpu" : nullptr;
  StreamEncoder enc(Dtype::bf16, tensors, GetParam(), 3, co);
  ASSERT_EQ(enc.start(), Status::ok);
  std::vector<uint8_t> got(want.size());
  DecompressOptions dopt;
  dopt.backend = "reference";  // an encoder bug must not cancel out in a matching decoder
  StreamDecoder dec(got.data(), got.size(), 2, enc.slot_capacity(), dopt);
  ASSERT_EQ(dec.start(), Status::ok);
  ASSERT_EQ(pump(enc, dec), Status::ok);
  EXPECT_TRUE(bytes_equal(got, want));
}

INSTANTIATE_TEST_SUITE_P(FrameSizes, RealKvFrames,
                         ::testing::Values(uint64_t{1} << 21, uint64_t{65536}, uint64_t{4096}));

TEST(Stream, BundledRealKvRoundTripBitExact) {
  std::vector<std::vector<uint8_t>> layers;
  for (const std::string& name : test::bf16_data_files()) {
    bool ok = false;
    layers.push_back(test::load_data_file(name, &ok));
    ASSERT_TRUE(ok) << name;
  }
  ASSERT_EQ(layers.size(), 10u);
  std::vector<Tensor> tensors;
  for (auto& l : layers) tensors.push_back({l.data(), l.size() / 2});
  const std::vector<uint8_t> want = concat(layers);
  CompressOptions co;
  co.checksum = true;
  StreamEncoder enc(Dtype::bf16, tensors, 100000, 4, co);
  ASSERT_EQ(enc.start(), Status::ok);
  std::vector<uint8_t> got(want.size());
  StreamDecoder dec(got.data(), got.size(), 2, enc.slot_capacity());
  ASSERT_EQ(dec.start(), Status::ok);
  ASSERT_EQ(pump(enc, dec), Status::ok);
  EXPECT_TRUE(bytes_equal(got, want));
  // 10 tensors of 262144 elements in frames of 100000: 3 frames each.
  EXPECT_EQ(enc.plan().size(), 30u);
}

TEST(Stream, EncoderStopsWhenRingIsFull) {
  auto data = synth::generate(synth::Generator::gaussian_kv, Dtype::fp16, 4096, 1);
  StreamEncoder enc(Dtype::fp16, {{data.data(), 4096}}, 512, 2);
  ASSERT_EQ(enc.start(), Status::ok);
  EncodedFrame a, b;
  bool done = false;
  ASSERT_EQ(enc.next(&a, &done), Status::ok);
  ASSERT_EQ(enc.next(&b, &done), Status::ok);
  EXPECT_NE(a.slot, b.slot);
  // Both slots are held: the third frame cannot be produced until one returns.
  std::atomic<bool> got_third{false};
  EncodedFrame c;
  std::thread t([&] {
    bool d = false;
    if (enc.next(&c, &d) == Status::ok && !d) got_third = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(got_third.load());
  enc.release(a.slot);
  t.join();
  EXPECT_TRUE(got_third.load());
  EXPECT_EQ(c.slot, a.slot);
  EXPECT_EQ(c.index, 2u);
}

TEST(Stream, ReleaseIgnoresSlotsNotHeld) {
  auto data = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 4096, 2);
  StreamEncoder enc(Dtype::bf16, {{data.data(), 4096}}, 1024, 2);
  ASSERT_EQ(enc.start(), Status::ok);
  EncodedFrame a, b;
  bool done = false;
  ASSERT_EQ(enc.next(&a, &done), Status::ok);
  ASSERT_EQ(enc.next(&b, &done), Status::ok);
  std::vector<uint8_t> a_bytes(a.data, a.data + a.size);
  enc.release(a.slot);
  enc.release(a.slot);  // twice: must not free it again
  enc.release(99);      // out of range
  // Frame 2 reuses a's slot; b's bytes stay untouched because b is still held.
  std::vector<uint8_t> b_bytes(b.data, b.data + b.size);
  EncodedFrame c;
  ASSERT_EQ(enc.next(&c, &done), Status::ok);
  EXPECT_EQ(c.slot, a.slot);
  EXPECT_TRUE(bytes_equal(std::vector<uint8_t>(b.data, b.data + b.size), b_bytes));
  // With a double release the worker could have taken the slot twice; the
  // fourth frame must wait for b or c to come back.
  std::atomic<bool> got{false};
  EncodedFrame d;
  std::thread t([&] {
    bool dd = false;
    if (enc.next(&d, &dd) == Status::ok && !dd) got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(got.load());
  enc.release(b.slot);
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(d.index, 3u);
}

TEST(Stream, EmptyInputEndsAtOnce) {
  StreamEncoder enc(Dtype::bf16, {}, 1024, 2);
  ASSERT_EQ(enc.start(), Status::ok);
  EncodedFrame f;
  bool done = false;
  EXPECT_EQ(enc.next(&f, &done), Status::ok);
  EXPECT_TRUE(done);
}

TEST(Stream, EncoderRejectsBadSetup) {
  StreamEncoder zero_slots(Dtype::bf16, {}, 1024, 0);
  EXPECT_EQ(zero_slots.start(), Status::invalid_argument);
  StreamEncoder null_data(Dtype::bf16, {{nullptr, 10}}, 1024, 2);
  EXPECT_EQ(null_data.start(), Status::invalid_argument);
  StreamEncoder not_started(Dtype::bf16, {}, 1024, 2);
  EncodedFrame f;
  bool done;
  EXPECT_EQ(not_started.next(&f, &done), Status::invalid_argument);
}

class DecoderErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    src = synth::generate(synth::Generator::gaussian_kv, Dtype::bf16, 5000, 9);
    frame.resize(compress_bound(Dtype::bf16, 5000));
    Result r = compress(Dtype::bf16, src.data(), 5000, frame.data(), frame.size());
    ASSERT_TRUE(r.ok());
    frame.resize(r.size);
    out.assign(src.size(), 0);
  }
  Status decode_one(const std::vector<uint8_t>& f, uint64_t offset, uint64_t expect) {
    StreamDecoder dec(out.data(), out.size(), 1, 1 << 16);
    Status s = dec.start();
    if (s != Status::ok) return s;
    uint32_t slot;
    s = dec.acquire(&slot);
    if (s != Status::ok) return s;
    std::memcpy(dec.slot_data(slot), f.data(), f.size());
    s = dec.submit(slot, f.size(), offset, expect);
    if (s != Status::ok) return s;
    return dec.finish();
  }
  std::vector<uint8_t> src, frame, out;
};

TEST_F(DecoderErrors, GoodFrameDecodes) {
  EXPECT_EQ(decode_one(frame, 0, src.size()), Status::ok);
  EXPECT_TRUE(bytes_equal(out, src));
}

TEST_F(DecoderErrors, CorruptHeaderIsReported) {
  auto bad = frame;
  bad[20] ^= 0x40;
  EXPECT_NE(decode_one(bad, 0, src.size()), Status::ok);
}

TEST_F(DecoderErrors, WrongExpectedSizeIsReported) {
  // A frame that decodes to more than its span must not spill past it.
  EXPECT_NE(decode_one(frame, 0, src.size() - 2), Status::ok);
  // One that decodes to less than its span leaves a hole: also an error.
  out.resize(src.size() + 2);
  EXPECT_EQ(decode_one(frame, 0, src.size() + 2), Status::size_mismatch);
}

TEST_F(DecoderErrors, TrailingBytesAreReported) {
  auto longer = frame;
  longer.resize(frame.size() + 8, 0);
  EXPECT_EQ(decode_one(longer, 0, src.size()), Status::size_mismatch);
}

TEST_F(DecoderErrors, SpanOutsideDestinationIsRejected) {
  EXPECT_EQ(decode_one(frame, 4, src.size()), Status::dst_too_small);
  EXPECT_EQ(decode_one(frame, UINT64_MAX, 1), Status::dst_too_small);
}

TEST_F(DecoderErrors, SubmitNeedsAnAcquiredSlot) {
  StreamDecoder dec(out.data(), out.size(), 2, 1 << 16);
  ASSERT_EQ(dec.start(), Status::ok);
  EXPECT_EQ(dec.submit(0, frame.size(), 0, src.size()), Status::invalid_argument);
  EXPECT_EQ(dec.submit(7, frame.size(), 0, src.size()), Status::invalid_argument);
  uint32_t slot;
  ASSERT_EQ(dec.acquire(&slot), Status::ok);
  EXPECT_EQ(dec.submit(slot, (1 << 16) + 1, 0, src.size()), Status::invalid_argument);
  uint32_t other, third;
  EXPECT_TRUE(dec.try_acquire(&other));
  EXPECT_FALSE(dec.try_acquire(&third));  // both slots taken
}

TEST(PipelineModel, LinkBoundSpeedupApproachesRatio) {
  PipelineParams p;
  p.enc_Bps = 1e9;
  p.dec_Bps = 2e9;
  p.link_Bps = 100e6;  // far below B_hide
  p.ratio = 1.5;
  PipelinePrediction r;
  ASSERT_EQ(predict(p, uint64_t{1} << 30, 1024, &r), Status::ok);
  EXPECT_EQ(r.bottleneck, Stage::link);
  EXPECT_DOUBLE_EQ(r.b_hide_Bps, 1e9 / 1.5);
  EXPECT_NEAR(r.raw_s, double(uint64_t{1} << 30) / 100e6, 1e-9);
  EXPECT_GT(r.speedup, 1.49);
  EXPECT_LE(r.speedup, 1.5);
  EXPECT_DOUBLE_EQ(r.ideal_speedup, 1.5);
}

TEST(PipelineModel, CodecBoundAboveBHide) {
  PipelineParams p;
  p.enc_Bps = 500e6;
  p.dec_Bps = 800e6;
  p.link_Bps = 1e9;  // above B_hide = 500e6 / 1.4
  p.ratio = 1.4;
  PipelinePrediction r;
  ASSERT_EQ(predict(p, 1000000000, 100, &r), Status::ok);
  EXPECT_EQ(r.bottleneck, Stage::encode);
  // Steady state = slowest stage: 10 MB frames at 500 MB/s.
  EXPECT_NEAR(r.steady_stage_s, 0.02, 1e-12);
  // fill (enc + link + dec of one frame) + 99 * slowest
  const double want = 0.02 + 0.01 / 1.4 + 0.0125 + 99 * 0.02;
  EXPECT_NEAR(r.compressed_s, want, 1e-12);
  EXPECT_LT(r.speedup, 1.0);
}

TEST(PipelineModel, SingleFrameHasNoOverlap) {
  PipelineParams p{1e9, 1e9, 1e8, 2.0, 0.001};
  PipelinePrediction r;
  ASSERT_EQ(predict(p, 100000000, 1, &r), Status::ok);
  EXPECT_NEAR(r.compressed_s, 0.1 + 0.5 + 0.001 + 0.1, 1e-12);
  EXPECT_NEAR(r.raw_s, 1.0 + 0.001, 1e-12);
}

TEST(PipelineModel, RejectsBadParameters) {
  PipelinePrediction r;
  PipelineParams p{1e9, 1e9, 1e8, 1.5, 0};
  EXPECT_EQ(predict(p, 100, 0, &r), Status::invalid_argument);
  EXPECT_EQ(predict(p, 100, 1, nullptr), Status::invalid_argument);
  PipelineParams bad = p;
  bad.ratio = 0;
  EXPECT_EQ(predict(bad, 100, 1, &r), Status::invalid_argument);
  bad = p;
  bad.link_Bps = -1;
  EXPECT_EQ(predict(bad, 100, 1, &r), Status::invalid_argument);
  bad = p;
  bad.frame_latency_s = -0.1;
  EXPECT_EQ(predict(bad, 100, 1, &r), Status::invalid_argument);
  EXPECT_STREQ(stage_name(Stage::decode), "decode");
}

}  // namespace
}  // namespace splitzip::stream
