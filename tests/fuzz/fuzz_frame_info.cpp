// frame_info on arbitrary bytes: the status must be the lowest failing rule
// of 1-11 (the spec oracle's), the fields must match the header bytes, and
// every shorter view of an accepted frame must be TRUNCATED.
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

  FUZZ_CHECK(fi.version == 1 && static_cast<uint32_t>(fi.dtype) == src[5], "version/dtype");
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check(data, size);
  if (size >= 64) {
    std::vector<uint8_t> fixed(data, data + size);
    if (szfuzz::repair_header_checks(fixed.data(), size)) check(fixed.data(), size);
  }
  return 0;
}
