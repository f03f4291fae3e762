/* SPDX-License-Identifier: Apache-2.0 */
// Streaming a KV cache as a sequence of self-contained frames (FORMAT.md 7),
// with encode, transfer and decode overlapped through bounded buffer rings.
// The paper's pipeline model of this stream is bench/pipeline_model.h.
//
// Producer (prefill side):  StreamEncoder encodes frame i+1.. on its own
//   thread into a ring of `slots` buffers while the caller ships frame i.
// Consumer (decode side):   StreamDecoder owns a ring of receive buffers; the
//   transport writes a frame into a free slot, submit() queues it, and a
//   worker thread decodes it into its place in the destination.
// Memory on each side is bounded by slots * slot size, independent of the
// payload size.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::stream {

// One input tensor (a layer's K or V, or one paged block), contiguous.
struct Tensor {
  const void* data = nullptr;
  uint64_t n_elems = 0;
};

// One frame of the stream: elements [first_elem, first_elem + n_elems) of
// tensor `tensor`, decoded at byte `out_offset` of the concatenation of all
// tensors in order.
struct FrameSpan {
  uint32_t tensor = 0;
  uint64_t first_elem = 0;
  uint64_t n_elems = 0;
  uint64_t out_offset = 0;
};

// Splits each tensor into frames of at most frame_elems elements (a frame
// never spans two tensors, so each layer decodes on its own). Empty tensors
// produce no frame. invalid_argument for a bad dtype or frame_elems == 0;
// limit_exceeded when the total size overflows 64 bits.
Status plan_frames(Dtype dtype, const uint64_t* tensor_elems, size_t n_tensors,
                   uint64_t frame_elems, std::vector<FrameSpan>* out);

// A frame ready to send. `data` stays valid until release(slot).
struct EncodedFrame {
  uint64_t index = 0;  // position in the plan
  uint32_t slot = 0;
  const uint8_t* data = nullptr;
  uint64_t size = 0;       // frame bytes
  uint64_t raw_bytes = 0;  // decoded bytes
  uint64_t out_offset = 0;
};

struct StageStats {
  uint64_t frames = 0;
  uint64_t raw_bytes = 0;
  uint64_t coded_bytes = 0;
  double busy_s = 0;  // time spent inside compress/decompress
};

class StreamEncoder {
 public:
  // The tensors must stay alive and unchanged until the encoder is done.
  // opts.codebook, if set, must outlive the encoder.
  StreamEncoder(Dtype dtype, std::vector<Tensor> tensors, uint64_t frame_elems, uint32_t slots,
                const CompressOptions& opts = {});
  ~StreamEncoder();
  StreamEncoder(const StreamEncoder&) = delete;
  StreamEncoder& operator=(const StreamEncoder&) = delete;

  // Plans the frames, allocates the ring and starts the worker thread.
  Status start();
  // Blocks until the next frame is encoded. *done = true (and ok) after the
  // last frame; an encode error is returned once and ends the stream.
  Status next(EncodedFrame* out, bool* done);
  // Gives a slot handed out by next() back to the ring so the worker can
  // reuse it; any other slot number is ignored.
  void release(uint32_t slot);
  // Stops the worker early (the destructor calls it too).
  void stop();

  const std::vector<FrameSpan>& plan() const { return plan_; }
  uint64_t slot_capacity() const { return slot_capacity_; }
  uint32_t slots() const { return slots_; }
  // The ring is one allocation, slot s at ring_data() + s * slot_capacity():
  // a transport can register it once.
  uint8_t* ring_data() { return ring_.data(); }
  uint64_t ring_bytes() const { return ring_.size(); }
  StageStats stats() const;

 private:
  void run();

  Dtype dtype_;
  std::vector<Tensor> tensors_;
  uint64_t frame_elems_;
  uint32_t slots_;
  CompressOptions opts_;
  std::vector<FrameSpan> plan_;
  uint64_t slot_capacity_ = 0;
  std::vector<uint8_t> ring_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<uint32_t> free_;
  std::deque<EncodedFrame> ready_;
  std::vector<uint8_t> out_;  // per slot: 1 while handed out by next()
  uint64_t consumed_ = 0;  // frames handed out by next()
  Status error_ = Status::ok;
  bool stop_ = false;
  bool started_ = false;
  StageStats stats_;
  std::thread worker_;
};

class StreamDecoder {
 public:
  // Decodes into dst (dst_size bytes). The ring holds `slots` buffers of
  // slot_capacity bytes each.
  StreamDecoder(void* dst, uint64_t dst_size, uint32_t slots, uint64_t slot_capacity,
                const DecompressOptions& opts = {});
  ~StreamDecoder();
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  // Allocates the ring and starts the worker thread; all slots start free.
  Status start();
  // Blocks until a slot is free and takes it (the transport writes into it).
  // Returns the first decode error instead, if one happened.
  Status acquire(uint32_t* slot);
  // Non-blocking acquire: false when no slot is free now.
  bool try_acquire(uint32_t* slot);
  // Queues the frame of frame_size bytes in `slot` for decoding at byte
  // dst_offset; it must decode to exactly expect_bytes. The slot returns to
  // the free list once decoded.
  Status submit(uint32_t slot, uint64_t frame_size, uint64_t dst_offset, uint64_t expect_bytes);
  // Waits until every submitted frame is decoded; returns the first error.
  Status finish();
  void stop();

  uint8_t* slot_data(uint32_t slot) { return ring_.data() + uint64_t{slot} * slot_capacity_; }
  uint64_t slot_capacity() const { return slot_capacity_; }
  uint32_t slots() const { return slots_; }
  uint8_t* ring_data() { return ring_.data(); }
  uint64_t ring_bytes() const { return ring_.size(); }
  StageStats stats() const;

 private:
  struct Job {
    uint32_t slot;
    uint64_t size, offset, expect;
  };
  void run();

  uint8_t* dst_;
  uint64_t dst_size_;
  uint32_t slots_;
  uint64_t slot_capacity_;
  DecompressOptions opts_;
  std::vector<uint8_t> ring_;
  std::vector<uint8_t> owned_;  // per slot: 1 while handed out or queued

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<uint32_t> free_;
  std::deque<Job> jobs_;
  uint64_t pending_ = 0;  // submitted, not yet decoded
  Status error_ = Status::ok;
  bool stop_ = false;
  bool started_ = false;
  StageStats stats_;
  std::thread worker_;
};

}  // namespace splitzip::stream
