// SPDX-License-Identifier: Apache-2.0
// Round trip: data, dtype, chunk size, checksum flag and codebook (user or
// dynamic) come from the fuzz input. The frame must be exactly the one
// FORMAT.md describes (stored-mode choice of 4.4, escape count, codebook),
// no larger than compress_bound, written nowhere past it, accepted by the
// spec oracle, and must decode to the input bit for bit. Another thread
// count must give the same bytes. Capacity cases also code with a table set
// calibrated on the input's first half (FORMAT.md 4.9).
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "spec_oracle.h"

namespace {

using splitzip::Status;

constexpr uint64_t kCanary = 64;
constexpr uint8_t kCanaryByte = 0xA5;

// Mode 1 with a table set (FORMAT.md 4.9) calibrated on the input's first
// half, so the second half's blocks may fall back to their own tables: the
// frame is the reference's at either thread count, names the set, decodes
// with it to the input, and without it is MISSING_TABLES, never data.
int tables_case(const szfuzz::CompressCase& c, const void* src) {
  if (c.n < 2) return 0;
  const void* bufs[1] = {src};
  const uint64_t half[1] = {c.n / 2};
  splitzip::TableSet set;
  const uint32_t T = 1u << (c.chunk_log2 % 6);
  const Status cs = splitzip::calibrate_tables(c.dtype, bufs, half, 1, &set, T);
  FUZZ_CHECK(cs == Status::ok && set.table_count() == T, "calibrate_tables: %s", splitzip::status_name(cs));
  const uint64_t in_bytes = c.n * splitzip::dtype_bytes(c.dtype);
  const uint64_t bound = splitzip::compress_bound(c.dtype, c.n);
  splitzip::CompressOptions o;
  o.checksum = c.checksum;
  o.threads = c.threads;
  o.mode = splitzip::Mode::capacity;
  o.tables = &set;
  std::vector<uint8_t> dst(bound + kCanary, kCanaryByte);
  const splitzip::Result r = splitzip::compress(c.dtype, src, c.n, dst.data(), dst.size(), o);
  for (uint64_t i = bound; i < dst.size(); ++i)
    FUZZ_CHECK(dst[i] == kCanaryByte, "set compress wrote byte %llu past compress_bound", (unsigned long long)i);
  FUZZ_CHECK(r.ok() && r.size <= bound, "set compress: %s", splitzip::status_name(r.status));
  for (const char* be : {"reference", static_cast<const char*>(nullptr)}) {
    splitzip::CompressOptions ro = o;
    ro.backend = be;
    ro.threads = be ? 1 : (c.threads == 1 ? 0 : 1);
    std::vector<uint8_t> other(bound);
    const splitzip::Result rr = splitzip::compress(c.dtype, src, c.n, other.data(), other.size(), ro);
    FUZZ_CHECK(rr.ok() && rr.size == r.size && std::memcmp(other.data(), dst.data(), r.size) == 0,
               "set frame differs (%s, %s)", be ? be : "other thread count", splitzip::status_name(rr.status));
  }
  splitzip::FrameInfo fi;
  FUZZ_CHECK(splitzip::frame_info(dst.data(), r.size, &fi) == Status::ok, "frame_info on own set frame");
  FUZZ_CHECK(fi.has_tables == !fi.stored && (fi.stored || (fi.tables_id == set.id() && fi.version == 3)),
             "set frame: TABLES flag, id or version");
  std::vector<uint8_t> back(in_bytes + 1);
  splitzip::DecompressOptions dopt;
  dopt.tables = &set;
  dopt.n_tables = 1;
  const splitzip::Result d = splitzip::decompress(dst.data(), r.size, back.data(), in_bytes, dopt);
  FUZZ_CHECK(d.ok() && d.size == in_bytes && std::memcmp(back.data(), src, in_bytes) == 0,
             "set round trip: %s", splitzip::status_name(d.status));
  if (fi.has_tables) {
    const Status m = splitzip::decompress(dst.data(), r.size, back.data(), in_bytes).status;
    FUZZ_CHECK(m == Status::missing_tables, "set frame without its set: %s", splitzip::status_name(m));
    const szfuzz::SpecVerdict v = szfuzz::spec_check(dst.data(), r.size);
    FUZZ_CHECK(v.first() == Status::missing_tables, "spec oracle on a set frame without the set: %s",
               splitzip::status_name(v.first()));
  }
  return 0;
}

// Mode 1 (FORMAT.md 4.6): the frame must be the reference's, be accepted by
// the spec oracle and decode there to the input, stay inside the bound,
// decode to the input, not depend on the thread count, and be refused one
// byte short.
int capacity_case(const szfuzz::CompressCase& c, const void* src) {
  const uint64_t in_bytes = c.n * splitzip::dtype_bytes(c.dtype);
  const uint64_t bound = splitzip::compress_bound(c.dtype, c.n);
  splitzip::CompressOptions o;
  o.checksum = c.checksum;
  o.threads = c.threads;
  o.mode = splitzip::Mode::capacity;
  std::vector<uint8_t> dst(bound + kCanary, kCanaryByte);
  const splitzip::Result r = splitzip::compress(c.dtype, src, c.n, dst.data(), dst.size(), o);
  for (uint64_t i = bound; i < dst.size(); ++i)
    FUZZ_CHECK(dst[i] == kCanaryByte, "capacity compress wrote byte %llu past compress_bound", (unsigned long long)i);
  FUZZ_CHECK(r.ok() && r.size <= bound, "capacity compress: %s", splitzip::status_name(r.status));
  splitzip::CompressOptions ro = o;
  ro.backend = "reference";
  std::vector<uint8_t> ref(bound);
  const splitzip::Result rr = splitzip::compress(c.dtype, src, c.n, ref.data(), ref.size(), ro);
  FUZZ_CHECK(rr.ok() && rr.size == r.size && std::memcmp(ref.data(), dst.data(), r.size) == 0,
             "capacity frame differs from the reference's (%s via %s)", splitzip::status_name(rr.status),
             r.backend ? r.backend : "?");
  splitzip::FrameInfo fi;
  FUZZ_CHECK(splitzip::frame_info(dst.data(), r.size, &fi) == Status::ok, "frame_info on own capacity frame");
  FUZZ_CHECK(fi.stored || (c.n > 0 && dst[49] == 1), "coded capacity frame without mode byte 1");
  std::vector<uint8_t> back(in_bytes + 1);
  const splitzip::Result d = splitzip::decompress(dst.data(), r.size, back.data(), in_bytes);
  FUZZ_CHECK(d.ok() && d.size == in_bytes, "capacity decompress: %s", splitzip::status_name(d.status));
  FUZZ_CHECK(c.n == 0 || std::memcmp(back.data(), src, in_bytes) == 0, "capacity round trip differs");
  const szfuzz::SpecVerdict v = szfuzz::spec_check(dst.data(), r.size);
  FUZZ_CHECK(v.ok(), "spec oracle rejects the capacity frame: %s", splitzip::status_name(v.first()));
  FUZZ_CHECK(c.n == 0 || (v.output.size() == in_bytes && std::memcmp(v.output.data(), src, in_bytes) == 0),
             "spec oracle decodes the capacity frame differently");
  splitzip::CompressOptions o2 = o;
  o2.threads = c.threads == 1 ? 0 : 1;
  std::vector<uint8_t> again(r.size);
  const splitzip::Result r2 = splitzip::compress(c.dtype, src, c.n, again.data(), again.size(), o2);
  FUZZ_CHECK(r2.ok() && r2.size == r.size && std::memcmp(again.data(), dst.data(), r.size) == 0,
             "capacity frame not deterministic across thread counts (%s)", splitzip::status_name(r2.status));
  std::vector<uint8_t> shorter(r.size - 1);
  const Status ss = splitzip::compress(c.dtype, src, c.n, shorter.data(), shorter.size(), o).status;
  FUZZ_CHECK(ss == Status::dst_too_small, "capacity frame-1: %s", splitzip::status_name(ss));
  return tables_case(c, src);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const szfuzz::CompressCase c = szfuzz::decode_case(data, size);
  const uint32_t bytes = splitzip::dtype_bytes(c.dtype);
  const uint64_t bound = splitzip::compress_bound(c.dtype, c.n);
  // The stored frame with block checks (FORMAT.md 5, v2).
  FUZZ_CHECK(bound == szfuzz::spec_stored_size(static_cast<uint32_t>(c.dtype), c.n,
                                                szfuzz::spec_checksum_blocks(c.n * bytes)),
             "compress_bound");

  if (c.capacity) return capacity_case(c, c.data.empty() ? static_cast<const void*>(&c) : c.data.data());

  splitzip::CompressOptions o;
  o.codebook = c.user_codebook ? &c.codebook : nullptr;
  o.chunk_log2 = c.chunk_log2;
  o.checksum = c.checksum;
  o.threads = c.threads;

  // Capacity beyond the bound, so only the promise (not the capacity) keeps
  // the encoder inside it; the canary shows any write past the bound.
  std::vector<uint8_t> dst(bound + kCanary, kCanaryByte);
  const void* src = c.data.empty() ? static_cast<const void*>(&c) : c.data.data();
  const splitzip::Result r = splitzip::compress(c.dtype, src, c.n, dst.data(), dst.size(), o);
  for (uint64_t i = bound; i < dst.size(); ++i)
    FUZZ_CHECK(dst[i] == kCanaryByte, "compress wrote byte %llu past compress_bound %llu",
               (unsigned long long)i, (unsigned long long)bound);

  if (c.user_codebook) {
    const Status cs = splitzip::validate_codebook(c.codebook);
    if (cs != Status::ok || c.codebook_dtype_mismatch) {
      FUZZ_CHECK(r.status == Status::bad_codebook || r.status == Status::invalid_argument,
                 "compress with a bad codebook (%s): %s", splitzip::status_name(cs),
                 splitzip::status_name(r.status));
      return 0;
    }
  }
  FUZZ_CHECK(r.ok(), "compress: %s", splitzip::status_name(r.status));
  FUZZ_CHECK(r.size <= bound, "frame %llu > bound %llu", (unsigned long long)r.size,
             (unsigned long long)bound);

  // The frame FORMAT.md 4.4 prescribes.
  const splitzip::Codebook cb = c.user_codebook ? c.codebook : szfuzz::spec_calibrate(c.dtype, src, c.n);
  const uint64_t e = szfuzz::spec_escape_count(c.dtype, src, c.n, cb);
  const uint32_t id = static_cast<uint32_t>(c.dtype);
  const uint64_t checks = c.checksum ? szfuzz::spec_checksum_blocks(c.n * bytes) : 0;
  const uint64_t coded_size = szfuzz::spec_coded_size(id, c.n, c.chunk_log2, e, checks);
  const uint64_t stored_size = szfuzz::spec_stored_size(id, c.n, checks);
  const bool coded = c.n > 0 && coded_size < stored_size;
  FUZZ_CHECK(r.size == (coded ? coded_size : stored_size), "frame size %llu, expected %llu (E=%llu)",
             (unsigned long long)r.size, (unsigned long long)(coded ? coded_size : stored_size),
             (unsigned long long)e);
  splitzip::FrameInfo fi;
  const Status is = splitzip::frame_info(dst.data(), r.size, &fi);
  FUZZ_CHECK(is == Status::ok, "frame_info on own frame: %s", splitzip::status_name(is));
  FUZZ_CHECK(fi.stored == !coded && fi.escape_count == (coded ? e : 0), "stored/escapes");
  FUZZ_CHECK(fi.n_elems == c.n && fi.dtype == c.dtype && fi.has_checksum == c.checksum, "header fields");
  if (coded) {
    FUZZ_CHECK(fi.chunk_log2 == c.chunk_log2, "chunk_log2");
    FUZZ_CHECK(fi.codebook.count == cb.count && std::memcmp(fi.codebook.entries, cb.entries, 16) == 0,
               "codebook in frame differs from the expected one");
  }
  if (c.checksum)
    FUZZ_CHECK(fi.content_checksum ==
                   szfuzz::spec_content_checksum_v2(static_cast<const uint8_t*>(src), c.n * bytes),
               "content checksum");
  FUZZ_CHECK(fi.version == 2 && fi.checksum_blocks == checks, "version / checksum_blocks");

  // Canonical per the spec, and decodes to the input.
  const szfuzz::SpecVerdict v = szfuzz::spec_check(dst.data(), r.size);
  FUZZ_CHECK(v.ok(), "spec oracle rejects the frame: %s", splitzip::status_name(v.first()));
  FUZZ_CHECK(c.n == 0 || std::memcmp(v.output.data(), src, c.n * bytes) == 0, "spec decode differs");
  std::vector<uint8_t> back(c.n * bytes + 1);
  const splitzip::Result d = splitzip::decompress(dst.data(), r.size, back.data(), c.n * bytes);
  FUZZ_CHECK(d.ok() && d.size == c.n * bytes, "decompress: %s", splitzip::status_name(d.status));
  FUZZ_CHECK(c.n == 0 || std::memcmp(back.data(), src, c.n * bytes) == 0, "round trip differs");

  // Same bytes with another thread count, into an exact-size buffer.
  splitzip::CompressOptions o2 = o;
  o2.threads = c.threads == 1 ? 0 : 1;
  std::vector<uint8_t> again(r.size);
  const splitzip::Result r2 = splitzip::compress(c.dtype, src, c.n, again.data(), again.size(), o2);
  FUZZ_CHECK(r2.ok() && r2.size == r.size && std::memcmp(again.data(), dst.data(), r.size) == 0,
             "not deterministic across thread counts (%s)", splitzip::status_name(r2.status));

  // One byte short of the frame: refused, and nothing written past capacity.
  std::vector<uint8_t> shorter(r.size - 1);
  const Status ss = splitzip::compress(c.dtype, src, c.n, shorter.data(), shorter.size(), o).status;
  FUZZ_CHECK(ss == Status::dst_too_small, "capacity frame-1: %s", splitzip::status_name(ss));
  return 0;
}
