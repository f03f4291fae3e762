// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/frame_reader.h"

#include <algorithm>
#include <unistd.h>

#include "tools/cli/errors.h"
#include "tools/cli/frames.h"

namespace szcli {

FrameReader::FrameReader(InputFd& in, const std::string& cmd) : in_(in), cmd_(cmd) {
  buf_.reserve(splitzip::kHeaderSize);
}

std::string FrameReader::where() const {
  return cmd_ + ": " + in_.what() + ": " + frame_where(static_cast<size_t>(index_), offset_);
}

bool FrameReader::next(splitzip::FrameInfo* fi) {
  if (pending_) skip();
  if (started_) ++index_;
  started_ = true;
  offset_ = end_;
  if (buf_.capacity() < splitzip::kHeaderSize) buf_.reserve(splitzip::kHeaderSize);
  const uint64_t got = in_.regular() ? in_.read_at(buf_.data(), std::min<uint64_t>(splitzip::kHeaderSize, in_.size() - std::min(in_.size(), end_)), end_)
                                     : in_.read(buf_.data(), splitzip::kHeaderSize);
  if (got == 0) return false;
  splitzip::Status st = splitzip::Status::truncated;
  std::string extra;
  if (got == splitzip::kHeaderSize) {
    st = splitzip::frame_header_info(buf_.data(), &fi_);
    // Rule 11 where the size is known; a pipe finds out when it reads.
    if (st == splitzip::Status::ok && in_.regular() && fi_.frame_size > in_.size() - end_)
      st = splitzip::Status::truncated;
  } else if (index_ > 0) {
    extra = " (" + std::to_string(got) + " trailing bytes)";
  }
  if (st != splitzip::Status::ok) fail(exit_code_for(st), where() + extra + ": " + status_text(st));
  *fi = fi_;
  pending_ = true;
  return true;
}

const uint8_t* FrameReader::read_frame() {
  const uint64_t size = fi_.frame_size;
  if (in_.regular()) {
    buf_.reserve(size);
    if (in_.read_at(buf_.data(), size, end_) != size)
      fail(kExitIo, where() + ": the input shrank while it was read");
  } else if (read_growing(in_, buf_, size, splitzip::kHeaderSize) < size) {
    fail(exit_code_for(splitzip::Status::truncated), where() + ": " + status_text(splitzip::Status::truncated));
  }
  end_ += size;
  pending_ = false;
  return buf_.data();
}

void FrameReader::skip() {
  const uint64_t size = fi_.frame_size;
  pending_ = false;
  if (in_.regular()) {  // the header check bounded it by the file size
    end_ += size;
    return;
  }
  // A pipe: read and drop the body in bounded pieces.
  uint64_t left = size - splitzip::kHeaderSize;
  const uint64_t piece = uint64_t{1} << 20;
  buf_.reserve(std::min(left, piece));
  while (left) {
    const uint64_t want = std::min(left, piece);
    if (in_.read(buf_.data(), want) != want)
      fail(exit_code_for(splitzip::Status::truncated), where() + ": " + status_text(splitzip::Status::truncated));
    left -= want;
  }
  end_ += size;
}

}  // namespace szcli
