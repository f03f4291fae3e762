/* SPDX-License-Identifier: Apache-2.0 */
// The CLI's view of a stream of frames (FORMAT.md section 7). The walk is
// splitzip::FrameIterator's; this only gathers its frames so that every
// header is validated (rules 1-11) and the decoded total known before
// anything is decoded, allocated or written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace szcli {

struct StreamFrames {
  std::vector<splitzip::FrameView> frames;  // empty for an empty stream
  uint64_t decoded_size = 0;                // sums over the frames
  uint64_t n_elems = 0;
  uint64_t escapes = 0;
};

// All frames of the stream at p. An empty stream (0 bytes) has no frames.
// Throws CliError (exit code from the status) naming the bad frame's index
// and offset; trailing bytes that are not a whole frame are TRUNCATED.
StreamFrames read_stream(const uint8_t* p, uint64_t size, const std::string& what);

// "frame I at offset O"
std::string frame_where(size_t index, uint64_t offset);

// "stored", "fast" or "capacity" (FORMAT.md 4.6: a capacity frame's header
// bytes 16..23 hold its coded exponent bytes, not an escape count).
inline bool is_capacity(const splitzip::FrameInfo& i) { return !i.stored && i.mode == splitzip::Mode::capacity; }
inline const char* frame_coding(const splitzip::FrameInfo& i) {
  return i.stored ? "stored" : is_capacity(i) ? "capacity" : "fast";
}

// Text for a failed decode of frame f, whose data starts at byte data_offset
// of the decoded stream: the status, and for CHECKSUM_MISMATCH on a v2 frame
// the first corrupt checksum block with its byte range in the original data.
std::string decode_failure_text(const splitzip::Result& r, const splitzip::FrameView& f, uint64_t data_offset);

// Throws CliError (exit code from r.status) with `what: ` + the text above
// unless r is ok.
void check_decode(const splitzip::Result& r, const splitzip::FrameView& f, uint64_t data_offset,
                  const std::string& what);

}  // namespace szcli
