/* SPDX-License-Identifier: Apache-2.0 */
// A corpus of malformed frames, one fault each, with the status FORMAT.md 9
// requires. Every backend's tests decode them and must agree.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

struct MalformedFrame {
  std::string name;            // e.g. "bf16/escape_position_past_chunk"
  std::vector<uint8_t> bytes;  // the frame
  uint64_t dst_capacity = 0;   // room for the frame's n * bytes
  Status expected = Status::ok;
  // CHECKSUM_MISMATCH of a v2 frame: the first block whose check fails;
  // all ones otherwise (also when only the combined checksum is wrong).
  uint64_t corrupt_block = ~uint64_t{0};
};

// Faults of rules 3-19 built from a coded frame (escapes, odd n, partial last
// chunk, checksum) and a stored frame of dtype, header re-sealed where needed
// so each fault reaches its own rule.
std::vector<MalformedFrame> malformed_frames(Dtype dtype);

// Decodes every frame of malformed_frames(d) for all dtypes with `backend`
// and requires the expected status and corrupt_block.
::testing::AssertionResult malformed_frames_rejected(const char* backend);

// Recomputes header_check of a frame whose first 64 bytes were edited.
void reseal_header(uint8_t* frame);

}  // namespace splitzip::test
