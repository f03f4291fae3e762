/* SPDX-License-Identifier: Apache-2.0 */
// An independent reading of FORMAT.md section 9 (format v1 and v2, modes 0
// and 1 with 4.6.5): which rules a frame breaks and what it decodes to. Written from the document, not from core/, so the
// fuzzers and reliability tests compare the library against the spec rather
// than against itself. Slow and simple on purpose.
#pragma once

#include <cstdint>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace szfuzz {

struct SpecOptions {
  uint64_t dst_capacity = ~uint64_t{0};
  uint64_t max_output_bytes = 0;  // 0: no limit (rule 12 off)
  bool verify_checksum = true;
};

// Rules are numbered as in FORMAT.md section 9 (1..19); bit r of a mask is rule r;
// bit 20: MISSING_TABLES (4.9).
struct SpecVerdict {
  // Rules broken for certain. Rules 1-13 stop at the first failure, so at
  // most one of them is set, and then nothing above it.
  uint32_t definite = 0;
  // definite plus the rules an implementation may also report because the
  // frame's meaning is undefined past a fault (counts that do not add up make
  // positions ambiguous; an undecodable frame has no output to checksum).
  uint32_t possible = 0;
  bool header_ok = false;      // rules 1-11 hold
  uint32_t version = 0;        // 1 or 2, valid when header_ok
  bool stored = false;
  // A mode-1 header (4.6). Its payload is read from 4.6 too (gaps, then
  // checks a-g in order); definite then holds the one rule bit whose status
  // the first failing check gives (BAD_PADDING 14, BAD_CODEBOOK 9, BAD_CODE
  // 18), which every backend must report.
  bool capacity = false;
  // A mode-1 frame with TABLES (4.9, v3): without its set the decoder
  // reports MISSING_TABLES, "rule" 20 here, after the gaps (rule 14).
  bool tables = false;
  uint64_t n_checks = 0;       // v2 with CHECKSUM: entries of stream 7
  // Rule 19 of a v2 frame broken by a block check: the first such block;
  // all ones otherwise (also when only the combined checksum differs).
  uint64_t corrupt_block = ~uint64_t{0};
  uint32_t dtype_bytes = 0;
  uint64_t n_elems = 0;
  uint64_t escape_count = 0;
  uint64_t frame_size = 0;     // from the header, valid when header_ok
  uint64_t payload_end = 0;    // frame_size less a tensor descriptor section (FORMAT.md 4.8)
  uint64_t decoded_size = 0;   // n * bytes, valid when header_ok
  std::vector<uint8_t> output; // decoded bytes, filled when definite == 0

  bool ok() const { return definite == 0; }
  // Status of the lowest broken rule (what the reference must report).
  splitzip::Status first() const;
  // Whether an implementation may report s for this frame.
  bool allows(splitzip::Status s) const;
};

// The status FORMAT.md section 9 names for rule 1..19.
splitzip::Status rule_status(int rule);

SpecVerdict spec_check(const uint8_t* src, uint64_t size, const SpecOptions& opts = {});

// Frame size a header implies (FORMAT.md 4.2/4.3), computed independently of
// core/layout.h. dtype_id must be 1..4. n_checks: entries of stream 7 (v2
// with CHECKSUM: one per 2^16 original bytes; 0 for v1 or no checksum).
uint64_t spec_coded_size(uint32_t dtype_id, uint64_t n, uint32_t chunk_log2, uint64_t escapes,
                         uint64_t n_checks = 0);
uint64_t spec_stored_size(uint32_t dtype_id, uint64_t n, uint64_t n_checks = 0);
uint64_t spec_capacity_size(uint32_t dtype_id, uint64_t n, uint64_t exp_bytes, uint64_t n_checks);
// Checksum blocks of a v2 frame of `bytes` original bytes.
uint64_t spec_checksum_blocks(uint64_t bytes);
// v2 content checksum (FORMAT.md 4.5) of `bytes` bytes.
uint64_t spec_content_checksum_v2(const uint8_t* data, uint64_t bytes);

// Dynamic top-16 calibration (FORMAT.md 3) of one buffer, written from the text.
splitzip::Codebook spec_calibrate(splitzip::Dtype dtype, const void* src, uint64_t n);
// Exponent of element i (raw bits, little-endian host).
uint32_t spec_exponent(splitzip::Dtype dtype, const void* src, uint64_t i);
// Escapes of a buffer under a codebook.
uint64_t spec_escape_count(splitzip::Dtype dtype, const void* src, uint64_t n,
                           const splitzip::Codebook& cb);

// Recomputes header_check (XXH64 for a version-1 header, else XXH3-64) of
// every frame of a stream in place, walking by the frame_size fields, so mutated headers get past rule 4 and reach the deeper
// rules. Returns true if anything changed.
bool repair_header_checks(uint8_t* buf, uint64_t size);

}  // namespace szfuzz
