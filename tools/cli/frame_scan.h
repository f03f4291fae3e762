/* SPDX-License-Identifier: Apache-2.0 */
// Walks a stream of back-to-back frames (FORMAT.md section 7), validating
// each header (rules 1-11) before anything is decoded or allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace szcli {

struct FrameRef {
  uint64_t offset = 0;  // from the start of the stream
  const uint8_t* data = nullptr;
  splitzip::FrameInfo info;
};

struct FrameStream {
  std::vector<FrameRef> frames;
  uint64_t decoded_size = 0;  // sum over frames
  uint64_t n_elems = 0;
  uint64_t escapes = 0;
};

// Throws CliError (exit code from the status) naming the frame index and
// offset; an empty input or trailing partial frame is TRUNCATED.
FrameStream scan_frames(const uint8_t* p, uint64_t size, const std::string& what);

}  // namespace szcli
