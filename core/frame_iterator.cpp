// SPDX-License-Identifier: Apache-2.0
// The frame iterator and header-only queries (FORMAT.md 7, rules 1-11).
#include <cstring>

#include "core/header.h"
#include "splitzip/splitzip.hpp"

namespace splitzip {

namespace {
FrameInfo info_of(const FrameHeader& h) {
  FrameInfo info;
  info.version = h.version;
  info.dtype = static_cast<Dtype>(h.dtype);
  info.stored = h.stored();
  info.has_checksum = h.has_checksum();
  info.has_tensor = h.has_tensor();
  info.has_tables = h.has_tables();
  info.tables_id = h.has_tables() ? h.tables_id() : 0;
  info.chunk_log2 = h.chunk_log2;
  info.n_elems = h.n_elems;
  info.escape_count = h.escape_count;
  info.frame_size = h.frame_size;
  info.decoded_size = h.decoded_bytes();
  info.content_checksum = h.content_checksum;
  info.checksum_block_log2 = h.block_log2;
  info.checksum_blocks = h.n_checks();
  info.mode = static_cast<Mode>(h.mode);
  info.codebook.dtype = info.dtype;
  info.codebook.count = h.codebook_count;
  std::memcpy(info.codebook.entries, h.codebook, 16);
  return info;
}
}  // namespace

Status parse_frame_info(const void* src, uint64_t src_size, FrameInfo* out) {
  if (out == nullptr || (src == nullptr && src_size > 0)) return Status::invalid_argument;
  FrameHeader h;
  const Status s = parse_header(static_cast<const uint8_t*>(src), src_size, &h);
  if (s == Status::ok) *out = info_of(h);
  return s;
}

Status frame_header_info(const void* src, FrameInfo* out) {
  if (out == nullptr || src == nullptr) return Status::invalid_argument;
  FrameHeader h;
  // Rule 11 cannot fail: the rest of the frame is the caller's to read.
  const Status s = parse_header(static_cast<const uint8_t*>(src), ~uint64_t{0}, &h);
  if (s == Status::ok) *out = info_of(h);
  return s;
}

Status FrameIterator::next(FrameView* view) {
  if (view == nullptr) return Status::invalid_argument;
  if (failed_ != Status::ok) return failed_;
  *view = FrameView{};
  if (pos_ == size_) return Status::ok;  // the end (an empty stream ends at once)
  if (src_ == nullptr) return failed_ = Status::invalid_argument;
  FrameInfo info;
  const Status s = parse_frame_info(src_ + pos_, size_ - pos_, &info);
  if (s != Status::ok) return failed_ = s;
  view->data = src_ + pos_;
  view->size = info.frame_size;
  view->offset = pos_;
  view->info = info;
  pos_ += info.frame_size;
  return Status::ok;
}

}  // namespace splitzip
