/* SPDX-License-Identifier: Apache-2.0 */
// Reads a stream of frames (FORMAT.md 7) one frame at a time from a file,
// a FIFO or stdin: each header is checked as it arrives (rules 1-10, and
// rule 11 when the input's size is known), so a bad input stops at its
// first bad header, and memory holds at most one frame. For `inspect`
// (headers only) and `verify`.
#pragma once

#include <cstdint>
#include <string>

#include "splitzip/splitzip.hpp"
#include "tools/cli/file_io.h"
#include "tools/cli/pipeline.h"

namespace szcli {

class FrameReader {
 public:
  // cmd: the command name for messages ("inspect: stdin: frame 3 ...").
  FrameReader(InputFd& in, const std::string& cmd);

  // The next frame's header into *fi; false at the end of the stream.
  // Throws CliError (exit code from the status) at a bad or truncated header.
  bool next(splitzip::FrameInfo* fi);
  // After next(): the whole frame (frame_size bytes), read into a reused
  // buffer; or skip() it without keeping its bytes.
  const uint8_t* read_frame();
  void skip();

  uint64_t index() const { return index_; }    // of the frame next() returned
  uint64_t offset() const { return offset_; }  // its offset in the stream
  uint64_t total() const { return end_; }      // stream bytes consumed so far
  std::string where() const;                   // "CMD: WHAT: frame I at offset O"

 private:
  InputFd& in_;
  std::string cmd_;
  AlignedBuffer buf_;
  splitzip::FrameInfo fi_;
  uint64_t index_ = 0, offset_ = 0, end_ = 0;
  bool started_ = false, pending_ = false;
};

}  // namespace szcli
