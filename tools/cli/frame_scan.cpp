// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/frame_scan.h"

#include "tools/cli/errors.h"

namespace szcli {

FrameStream scan_frames(const uint8_t* p, uint64_t size, const std::string& what) {
  FrameStream s;
  if (size == 0) fail(kExitInvalid, what + ": empty input, no frame: " + status_text(splitzip::Status::truncated));
  uint64_t off = 0;
  while (off < size) {
    FrameRef f;
    f.offset = off;
    f.data = p + off;
    const splitzip::Status st = splitzip::frame_info(f.data, size - off, &f.info);
    if (st != splitzip::Status::ok) {
      std::string where = what + ": frame " + std::to_string(s.frames.size()) + " at offset " + std::to_string(off);
      if (st == splitzip::Status::truncated && !s.frames.empty() && size - off < splitzip::kHeaderSize)
        where += " (" + std::to_string(size - off) + " trailing bytes)";
      fail(exit_code_for(st), where + ": " + status_text(st));
    }
    // frame_info validated frame_size; guard the walk regardless.
    if (f.info.frame_size < splitzip::kHeaderSize || f.info.frame_size > size - off)
      fail(kExitInternal, what + ": frame " + std::to_string(s.frames.size()) + " reports an impossible size");
    if (f.info.decoded_size > UINT64_MAX - s.decoded_size)
      fail(kExitLimit, what + ": decoded size of the stream overflows 64 bits");
    s.decoded_size += f.info.decoded_size;
    s.n_elems += f.info.n_elems;
    s.escapes += f.info.escape_count;
    off += f.info.frame_size;
    s.frames.push_back(f);
  }
  return s;
}

}  // namespace szcli
