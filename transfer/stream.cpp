// SPDX-License-Identifier: Apache-2.0
#include "transfer/stream.h"

#include <algorithm>
#include <chrono>
#include <new>

namespace splitzip::stream {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status plan_frames(Dtype dtype, const uint64_t* tensor_elems, size_t n_tensors,
                   uint64_t frame_elems, std::vector<FrameSpan>* out) {
  if (!out || !dtype_valid(dtype) || frame_elems == 0 || (n_tensors && !tensor_elems) ||
      n_tensors > UINT32_MAX)
    return Status::invalid_argument;
  // A frame's n_elems is limited by the format.
  if (frame_elems > kMaxElems) frame_elems = kMaxElems;
  const uint64_t bytes = dtype_bytes(dtype);
  std::vector<FrameSpan> plan;
  uint64_t offset = 0;
  for (size_t t = 0; t < n_tensors; ++t) {
    const uint64_t n = tensor_elems[t];
    if (n > UINT64_MAX / bytes || offset > UINT64_MAX - n * bytes) return Status::limit_exceeded;
    for (uint64_t first = 0; first < n; first += frame_elems) {
      FrameSpan f;
      f.tensor = static_cast<uint32_t>(t);
      f.first_elem = first;
      f.n_elems = std::min(frame_elems, n - first);
      f.out_offset = offset + first * bytes;
      plan.push_back(f);
    }
    offset += n * bytes;
  }
  *out = std::move(plan);
  return Status::ok;
}

// ---- encoder ---------------------------------------------------------------

StreamEncoder::StreamEncoder(Dtype dtype, std::vector<Tensor> tensors, uint64_t frame_elems,
                             uint32_t slots, const CompressOptions& opts)
    : dtype_(dtype), tensors_(std::move(tensors)), frame_elems_(frame_elems), slots_(slots),
      opts_(opts) {}

StreamEncoder::~StreamEncoder() { stop(); }

Status StreamEncoder::start() {
  if (started_ || slots_ == 0) return Status::invalid_argument;
  std::vector<uint64_t> elems(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (!tensors_[i].data && tensors_[i].n_elems) return Status::invalid_argument;
    elems[i] = tensors_[i].n_elems;
  }
  Status s = plan_frames(dtype_, elems.data(), elems.size(), frame_elems_, &plan_);
  if (s != Status::ok) return s;
  uint64_t largest = 0;
  for (const FrameSpan& f : plan_) largest = std::max(largest, f.n_elems);
  slot_capacity_ = compress_bound(dtype_, largest);
  // Round slots to 64 bytes so each frame starts aligned.
  slot_capacity_ = (slot_capacity_ + 63) & ~uint64_t{63};
  if (slot_capacity_ && slots_ > UINT64_MAX / slot_capacity_) return Status::limit_exceeded;
  try {
    ring_.resize(slot_capacity_ * slots_);
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  } catch (const std::length_error&) {
    return Status::out_of_memory;
  }
  out_.assign(slots_, 0);
  for (uint32_t i = 0; i < slots_; ++i) free_.push_back(i);
  started_ = true;
  worker_ = std::thread([this] { run(); });
  return Status::ok;
}

void StreamEncoder::run() {
  const uint64_t bytes = dtype_bytes(dtype_);
  for (uint64_t i = 0; i < plan_.size(); ++i) {
    uint32_t slot;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !free_.empty(); });
      if (stop_) return;
      slot = free_.front();
      free_.pop_front();
    }
    const FrameSpan& f = plan_[i];
    const uint8_t* src = static_cast<const uint8_t*>(tensors_[f.tensor].data) + f.first_elem * bytes;
    uint8_t* dst = ring_.data() + uint64_t{slot} * slot_capacity_;
    const double t0 = now_s();
    Result r = compress(dtype_, src, f.n_elems, dst, slot_capacity_, opts_);
    const double dt = now_s() - t0;
    std::lock_guard<std::mutex> lk(mu_);
    if (!r.ok()) {
      error_ = r.status;
      cv_.notify_all();
      return;
    }
    EncodedFrame e;
    e.index = i;
    e.slot = slot;
    e.data = dst;
    e.size = r.size;
    e.raw_bytes = f.n_elems * bytes;
    e.out_offset = f.out_offset;
    ready_.push_back(e);
    stats_.frames++;
    stats_.raw_bytes += e.raw_bytes;
    stats_.coded_bytes += r.size;
    stats_.busy_s += dt;
    cv_.notify_all();
  }
}

Status StreamEncoder::next(EncodedFrame* out, bool* done) {
  if (!out || !done) return Status::invalid_argument;
  *done = false;
  std::unique_lock<std::mutex> lk(mu_);
  if (!started_) return Status::invalid_argument;
  if (consumed_ == plan_.size()) {
    *done = true;
    return Status::ok;
  }
  cv_.wait(lk, [&] { return stop_ || !ready_.empty() || error_ != Status::ok; });
  if (!ready_.empty()) {
    *out = ready_.front();
    ready_.pop_front();
    out_[out->slot] = 1;
    consumed_++;
    return Status::ok;
  }
  if (error_ != Status::ok) {
    Status e = error_;
    consumed_ = plan_.size();  // the stream ends here
    return e;
  }
  return Status::invalid_argument;  // stopped
}

void StreamEncoder::release(uint32_t slot) {
  std::lock_guard<std::mutex> lk(mu_);
  // Only a slot the caller holds: a free one or one the worker is filling
  // must not enter the free list (twice).
  if (slot >= out_.size() || out_[slot] != 1) return;
  out_[slot] = 0;
  free_.push_back(slot);
  cv_.notify_all();
}

void StreamEncoder::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

StageStats StreamEncoder::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

// ---- decoder ---------------------------------------------------------------

StreamDecoder::StreamDecoder(void* dst, uint64_t dst_size, uint32_t slots, uint64_t slot_capacity,
                             const DecompressOptions& opts)
    : dst_(static_cast<uint8_t*>(dst)), dst_size_(dst_size), slots_(slots),
      slot_capacity_(slot_capacity), opts_(opts) {}

StreamDecoder::~StreamDecoder() { stop(); }

Status StreamDecoder::start() {
  if (started_ || slots_ == 0 || slot_capacity_ == 0 || (!dst_ && dst_size_))
    return Status::invalid_argument;
  if (slots_ > UINT64_MAX / slot_capacity_) return Status::limit_exceeded;
  try {
    ring_.resize(slot_capacity_ * slots_);
    owned_.assign(slots_, 0);
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory;
  } catch (const std::length_error&) {
    return Status::out_of_memory;
  }
  for (uint32_t i = 0; i < slots_; ++i) free_.push_back(i);
  started_ = true;
  worker_ = std::thread([this] { run(); });
  return Status::ok;
}

Status StreamDecoder::acquire(uint32_t* slot) {
  if (!slot) return Status::invalid_argument;
  std::unique_lock<std::mutex> lk(mu_);
  if (!started_) return Status::invalid_argument;
  cv_.wait(lk, [&] { return stop_ || !free_.empty() || error_ != Status::ok; });
  if (error_ != Status::ok) return error_;
  if (stop_) return Status::invalid_argument;
  *slot = free_.front();
  free_.pop_front();
  owned_[*slot] = 1;
  return Status::ok;
}

bool StreamDecoder::try_acquire(uint32_t* slot) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!slot || !started_ || stop_ || free_.empty() || error_ != Status::ok) return false;
  *slot = free_.front();
  free_.pop_front();
  owned_[*slot] = 1;
  return true;
}

Status StreamDecoder::submit(uint32_t slot, uint64_t frame_size, uint64_t dst_offset,
                             uint64_t expect_bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!started_ || slot >= slots_ || owned_[slot] != 1) return Status::invalid_argument;
  if (frame_size > slot_capacity_) return Status::invalid_argument;
  if (dst_offset > dst_size_ || expect_bytes > dst_size_ - dst_offset)
    return Status::dst_too_small;
  if (error_ != Status::ok) return error_;
  owned_[slot] = 2;  // queued
  jobs_.push_back(Job{slot, frame_size, dst_offset, expect_bytes});
  pending_++;
  cv_.notify_all();
  return Status::ok;
}

void StreamDecoder::run() {
  for (;;) {
    Job j;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopped
      j = jobs_.front();
      jobs_.pop_front();
    }
    DecompressOptions o = opts_;
    // The frame must fill exactly its span: never write past it into the
    // neighbouring frame's bytes.
    o.max_output_bytes = j.expect;
    const double t0 = now_s();
    Result r = decompress(slot_data(j.slot), j.size, dst_ + j.offset, j.expect, o);
    const double dt = now_s() - t0;
    Status s = r.status;
    if (s == Status::ok && r.size != j.expect) s = Status::size_mismatch;
    if (s == Status::ok) {
      // Trailing bytes after the frame mean the sender's size and the frame disagree.
      FrameInfo fi;
      if (frame_info(slot_data(j.slot), j.size, &fi) != Status::ok || fi.frame_size != j.size)
        s = Status::size_mismatch;
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (s != Status::ok && error_ == Status::ok) error_ = s;
    stats_.frames++;
    stats_.raw_bytes += r.size;
    stats_.coded_bytes += j.size;
    stats_.busy_s += dt;
    owned_[j.slot] = 0;
    free_.push_back(j.slot);
    pending_--;
    cv_.notify_all();
  }
}

Status StreamDecoder::finish() {
  std::unique_lock<std::mutex> lk(mu_);
  if (!started_) return Status::invalid_argument;
  cv_.wait(lk, [&] { return stop_ || pending_ == 0; });
  return error_;
}

void StreamDecoder::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

StageStats StreamDecoder::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

}  // namespace splitzip::stream
