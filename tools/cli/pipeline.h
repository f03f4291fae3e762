// SPDX-License-Identifier: Apache-2.0
// The streaming engine of `compress` and `decompress`: a bounded ring of
// frame slots moved through three stages,
//
//   reader (1 thread)  ->  coders (N threads)  ->  writer (the calling thread)
//
// The reader fills slot i % S with frame i, any free coder codes it, and the
// writer consumes frames strictly in index order, then hands the slot back
// to the reader. Memory is S slots, allocated and touched once up front and
// reused for every frame (no allocation, no page fault per frame). The output
// order, and so the output bytes, do not depend on N.
//
// Any stage may throw CliError (or bad_alloc): the pipeline stops every
// stage and rethrows the error of the lowest frame index from run().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace szcli {

class InputFd;

// Default frame of `compress`: 2^18 elements (512 KiB of bf16). One frame's
// input and output (~0.9 MiB for bf16) stay in a 1 MiB L2 while it is
// histogrammed, coded and checksummed; the 64-byte header and 4 bytes per
// 64 KiB checksum block cost 0.02% of ratio; and each bundled 256Ki-element
// KV file stays one frame.
inline constexpr uint64_t kDefaultFrameElems = uint64_t{1} << 18;
// Frames larger than this (a big --frame-size, or old 1 GiB frames on
// decompress) go through the pipeline one at a time, coded with N threads.
inline constexpr uint64_t kBigFrameBytes = uint64_t{16} << 20;

// A page-aligned byte buffer that keeps its pages: grow() reallocates only
// when asked for more than it holds, and touches new pages once.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;

  // Capacity >= bytes; keeps the first `keep` bytes when it reallocates.
  // Throws CliError(kExitInternal) when memory runs out.
  void reserve(uint64_t bytes, uint64_t keep = 0);
  // Frees the buffer if it holds more than `limit` bytes (after a rare big frame).
  void shrink_to(uint64_t limit);
  uint8_t* data() { return p_; }
  const uint8_t* data() const { return p_; }
  uint64_t capacity() const { return cap_; }

 private:
  uint8_t* p_ = nullptr;
  uint64_t cap_ = 0;
};

struct PipelineSlot {
  uint64_t index = 0;  // frame number
  AlignedBuffer in, out;
  uint64_t in_size = 0, out_size = 0;
  // Free for the stages' bookkeeping (offsets, element counts, statuses).
  uint64_t aux[4] = {};
  const char* backend = nullptr;
};

class FramePipeline {
 public:
  enum class Produced { frame, last_frame, none };
  // Reader: fills slot.in for frame slot.index; `none` means the input ended
  // before this frame, `last_frame` that this is the final frame.
  using ProduceFn = std::function<Produced(PipelineSlot&)>;
  // Coder: slot.in -> slot.out. Runs on any of the N coder threads.
  using CodeFn = std::function<void(PipelineSlot&)>;
  // Writer: consumes frames in index order on the thread that called run().
  using ConsumeFn = std::function<void(PipelineSlot&)>;

  // slots >= coders + 1; each slot's buffers are sized by `prepare` before
  // the threads start.
  FramePipeline(uint32_t coders, uint32_t slots);
  std::vector<PipelineSlot>& slots() { return slots_; }

  // Runs to the end of the input; returns the number of frames.
  uint64_t run(const ProduceFn& produce, const CodeFn& code, const ConsumeFn& consume);

  // For the reader, inside produce(): blocks until every earlier frame has
  // been consumed, so that a frame needing unusually large buffers is the
  // only one in flight. False when the pipeline is stopping.
  bool wait_drained(uint64_t index);

 private:
  enum class State : uint8_t { free, filled, coding, coded };
  void reader_loop(const ProduceFn& produce);
  void coder_loop(const CodeFn& code);
  void record_error(uint64_t index, int code, const std::string& message);

  uint32_t coders_;
  std::vector<PipelineSlot> slots_;
  std::vector<State> state_;

  std::mutex mu_;
  std::condition_variable cv_reader_, cv_coder_, cv_writer_;
  uint64_t produced_ = 0;  // frames filled
  uint64_t claimed_ = 0;   // frames taken by a coder
  uint64_t consumed_ = 0;  // frames written
  bool ended_ = false;     // produced_ is final
  bool stop_ = false;

  bool failed_ = false;
  uint64_t error_index_ = 0;
  int error_code_ = 0;
  std::string error_message_;
};

// The positional mode, for a regular input file and a temp-file output:
// `threads` workers each take whole frames in increasing index order and do
// everything for one (pread, code, pwrite at its offset), so the kernel's
// copies run in parallel too. work(worker, index) returns false once index
// is past the last frame. A worker that needs the output offset of its frame
// calls OrderedOffsets::take(). The first error (lowest frame index) is
// rethrown once every worker has stopped.
class OrderedOffsets {
 public:
  // Blocks until frames 0..index-1 have taken theirs, then returns the
  // offset of frame `index` and advances by size. Throws CliError when the
  // run is stopping (an earlier frame failed).
  uint64_t take(uint64_t index, uint64_t size);
  void stop();
  uint64_t total() const { return next_offset_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_index_ = 0, next_offset_ = 0;
  bool stop_ = false;
};

void run_frames_parallel(uint32_t threads, const std::function<bool(uint32_t worker, uint64_t index)>& work,
                         OrderedOffsets* offsets);

// Online CPUs, at least 1 (for -T0).
uint32_t online_cpus();

// Reads up to `want` bytes from in into buf (from offset `have`), growing
// buf in doubling steps only as data actually arrives, so a short pipe never
// allocates a whole big frame. Returns the bytes in buf (< want at the end).
uint64_t read_growing(InputFd& in, AlignedBuffer& buf, uint64_t want, uint64_t have = 0);

}  // namespace szcli
