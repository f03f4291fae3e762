// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/frames.h"

#include <algorithm>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"

namespace szcli {

std::string frame_where(size_t index, uint64_t offset) {
  return "frame " + std::to_string(index) + " at offset " + std::to_string(offset);
}

StreamFrames read_stream(const uint8_t* p, uint64_t size, const std::string& what) {
  StreamFrames s;
  splitzip::FrameIterator it(p, size);
  splitzip::FrameView v;
  for (;;) {
    const splitzip::Status st = it.next(&v);
    if (st != splitzip::Status::ok) {
      std::string where = what + ": " + frame_where(s.frames.size(), it.offset());
      if (st == splitzip::Status::truncated && !s.frames.empty() && size - it.offset() < splitzip::kHeaderSize)
        where += " (" + std::to_string(size - it.offset()) + " trailing bytes)";
      fail(exit_code_for(st), where + ": " + status_text(st));
    }
    if (v.data == nullptr) break;  // the end
    if (v.info.decoded_size > UINT64_MAX - s.decoded_size)
      fail(kExitLimit, what + ": decoded size of the stream overflows 64 bits");
    s.decoded_size += v.info.decoded_size;
    s.n_elems += v.info.n_elems;
    s.escapes += v.info.escape_count;
    s.frames.push_back(v);
  }
  return s;
}

std::string decode_failure_text(const splitzip::Result& r, const splitzip::FrameView& f, uint64_t data_offset) {
  std::string t = status_text(r.status);
  const splitzip::FrameInfo& i = f.info;
  if (r.status == splitzip::Status::missing_tables) {
    // The id may lie past the header the caller read: ask the whole frame.
    splitzip::FrameInfo full = i;
    if (!full.has_tables && f.data != nullptr) (void)splitzip::frame_info(f.data, f.size, &full);
    if (full.has_tables) t += ": " + missing_tables_hint(full.tables_id);
  }
  if (r.status == splitzip::Status::checksum_mismatch && r.corrupt_block != ~uint64_t{0} &&
      i.checksum_block_log2 != 0 && i.checksum_block_log2 < 64) {
    const uint64_t block = uint64_t{1} << i.checksum_block_log2;
    const uint64_t lo = std::min(i.decoded_size, r.corrupt_block * block);
    const uint64_t hi = std::min(i.decoded_size, lo + block);
    t += ": checksum block " + std::to_string(r.corrupt_block) + " of " + std::to_string(i.checksum_blocks) +
         " is corrupt (original bytes [" + std::to_string(lo) + ", " + std::to_string(hi) +
         ") of this frame, [" + std::to_string(data_offset + lo) + ", " + std::to_string(data_offset + hi) +
         ") of the decoded stream)";
  }
  return t;
}

void check_decode(const splitzip::Result& r, const splitzip::FrameView& f, uint64_t data_offset,
                  const std::string& what) {
  if (!r.ok()) fail(exit_code_for(r.status), what + ": " + decode_failure_text(r, f, data_offset));
}

}  // namespace szcli
