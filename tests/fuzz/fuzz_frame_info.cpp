// SPDX-License-Identifier: Apache-2.0
// frame_info on arbitrary bytes: the status must be the lowest failing rule
// of 1-11 (the spec oracle's), the fields must match the header bytes, and
// every shorter view of an accepted frame must be TRUNCATED. The same bytes
// also go to codebook_deserialize, the other parser of untrusted headers
// (.szcb files, FORMAT.md 10), checked against the section's rules.
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "spec_oracle.h"

namespace {

using splitzip::Status;

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void check(const uint8_t* src, size_t size) {
  // Header rules only: no destination or limit in play.
  const szfuzz::SpecVerdict v = szfuzz::spec_check(src, size);
  const Status expect = v.header_ok ? Status::ok : v.first();
  splitzip::FrameInfo fi;
  const Status s = splitzip::frame_info(src, size, &fi);
  FUZZ_CHECK(s == expect, "frame_info: %s, expected %s", splitzip::status_name(s),
             splitzip::status_name(expect));
  if (s != Status::ok) return;

  FUZZ_CHECK(fi.version == src[4] && fi.version == v.version && static_cast<uint32_t>(fi.dtype) == src[5],
             "version/dtype");
  // v2: byte 50 is block_log2 (16 with CHECKSUM), stream 7 has one entry per block.
  FUZZ_CHECK(fi.checksum_block_log2 == (fi.version >= 2 ? src[50] : 0u), "checksum_block_log2");
  FUZZ_CHECK(fi.checksum_blocks == v.n_checks, "checksum_blocks %llu, spec %llu",
             (unsigned long long)fi.checksum_blocks, (unsigned long long)v.n_checks);
  {
    // frame_header_info: rules 1-10 on the 64 header bytes alone.
    std::vector<uint8_t> hdr(src, src + 64);
    splitzip::FrameInfo hi;
    FUZZ_CHECK(splitzip::frame_header_info(hdr.data(), &hi) == Status::ok && hi.frame_size == fi.frame_size,
               "frame_header_info");
  }
  FUZZ_CHECK(fi.stored == ((src[6] & 1) != 0) && fi.has_checksum == ((src[6] & 2) != 0), "flags");
  FUZZ_CHECK(fi.chunk_log2 == src[7], "chunk_log2");
  FUZZ_CHECK(fi.n_elems == le64(src + 8) && fi.escape_count == le64(src + 16), "counts");
  FUZZ_CHECK(fi.frame_size == le64(src + 24) && fi.frame_size == v.frame_size, "frame_size");
  FUZZ_CHECK(fi.frame_size >= 64 && fi.frame_size % 16 == 0 && fi.frame_size <= size,
             "frame_size %llu out of range", (unsigned long long)fi.frame_size);
  FUZZ_CHECK(fi.decoded_size == fi.n_elems * splitzip::dtype_bytes(fi.dtype), "decoded_size");
  FUZZ_CHECK(fi.content_checksum == le64(src + 56), "content_checksum");
  FUZZ_CHECK(fi.codebook.count == src[48] && std::memcmp(fi.codebook.entries, src + 32, 16) == 0,
             "codebook");

  // Any view shorter than the frame is TRUNCATED (rule 1 or 11), never a
  // read past it: exact-size copies let ASan see one.
  for (uint64_t cut : {fi.frame_size - 1, uint64_t{63}, fi.frame_size / 2}) {
    if (cut >= fi.frame_size) continue;
    std::vector<uint8_t> part(src, src + cut);
    splitzip::FrameInfo pi;
    const Status ps = splitzip::frame_info(part.data(), cut, &pi);
    FUZZ_CHECK(ps == Status::truncated, "cut at %llu: %s", (unsigned long long)cut,
               splitzip::status_name(ps));
  }
}

// FORMAT.md 10, in the order of section 9's header rules, then rule 9.
Status spec_codebook_status(const uint8_t* b, uint64_t size) {
  if (size < 32) return Status::truncated;
  if (!(b[0] == 0x53 && b[1] == 0x5A && b[2] == 0x43 && b[3] == 0x42)) return Status::bad_magic;
  if (b[4] != 1) return Status::unsupported_version;
  const uint64_t h = splitzip::xxh64(b, 28, 0) & 0xFFFFFFFFu;
  if ((b[28] | (b[29] << 8) | (b[30] << 16) | (uint64_t{b[31]} << 24)) != h) return Status::header_corrupt;
  if (b[5] < 1 || b[5] > 5) return Status::bad_dtype;  // 5: fp8_e4m3 (FORMAT.md 4.7)
  if (b[7] || b[24] || b[25] || b[26] || b[27]) return Status::reserved_bits;
  const uint32_t count = b[6];
  const bool five = b[5] == 2 || b[5] == 4;
  const bool e4m3 = b[5] == 5;  // 4-bit exponents, at most 7 entries (code 7 is the escape)
  if (count < 1 || count > (e4m3 ? 7u : 16u)) return Status::bad_codebook;
  for (uint32_t i = 0; i < 16; ++i) {
    const uint8_t e = b[8 + i];
    if (i >= count) {
      if (e) return Status::bad_codebook;
      continue;
    }
    if ((five && e >= 32) || (e4m3 && e >= 16)) return Status::bad_codebook;
    for (uint32_t j = 0; j < i; ++j)
      if (b[8 + j] == e) return Status::bad_codebook;
  }
  return Status::ok;
}

void check_codebook_file(const uint8_t* src, size_t size) {
  splitzip::Codebook cb;
  // Any length must be safe; the first 32 bytes are the file.
  (void)splitzip::codebook_deserialize(src, size, &cb);
  const uint64_t view = size < 32 ? size : 32;
  std::vector<uint8_t> exact(src, src + view);
  const Status s = splitzip::codebook_deserialize(exact.data(), view, &cb);
  const Status want = spec_codebook_status(exact.data(), view);
  FUZZ_CHECK(s == want, "codebook_deserialize: %s, expected %s", splitzip::status_name(s),
             splitzip::status_name(want));
  if (s != Status::ok) return;
  uint8_t again[splitzip::kCodebookFileSize];
  FUZZ_CHECK(splitzip::codebook_serialize(cb, again) == Status::ok &&
                 std::memcmp(again, exact.data(), 32) == 0,
             "codebook file does not re-serialize to itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check(data, size);
  check_codebook_file(data, size);
  if (size >= 64) {
    std::vector<uint8_t> fixed(data, data + size);
    if (szfuzz::repair_header_checks(fixed.data(), size)) check(fixed.data(), size);
  }
  if (size >= 32) {
    // Codebook file with its hash recomputed, to reach the field rules.
    std::vector<uint8_t> cbf(data, data + 32);
    const uint64_t h = splitzip::xxh64(cbf.data(), 28, 0);
    for (int i = 0; i < 4; ++i) cbf[28 + i] = static_cast<uint8_t>(h >> (8 * i));
    check_codebook_file(cbf.data(), cbf.size());
  }
  return 0;
}
