// SPDX-License-Identifier: Apache-2.0
// decompress / decompress_frames on arbitrary bytes. Every answer is checked
// against the spec oracle: the status must be one FORMAT.md section 9 allows
// (the exact lowest rule for rules 1-13 and for the reference backend), a
// success must reproduce the oracle's output, and nothing may touch memory
// outside the exact-size buffers (ASan); the C API must answer like the C++
// one. Each input also runs a second time with its header checks repaired,
// so mutations reach the payload rules.
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "spec_oracle.h"
#include "splitzip/splitzip.h"

namespace {

using splitzip::Status;
using szfuzz::SpecOptions;
using szfuzz::SpecVerdict;

// Decoded sizes above this are not materialized (inputs are far smaller).
constexpr uint64_t kMaxOut = uint64_t{8} << 20;

// Exact-size heap buffer; never a null pointer, so a zero-size frame still
// gets a valid dst.
struct Buf {
  std::vector<uint8_t> v;
  explicit Buf(uint64_t n) : v(n ? n : 1) {}
  uint8_t* data() { return v.data(); }
};

void check_status(const SpecVerdict& v, Status got, bool reference, const char* what) {
  FUZZ_CHECK(v.allows(got), "%s: %s not allowed (lowest rule %s)", what, splitzip::status_name(got),
             splitzip::status_name(v.first()));
  // Rules 1-13 are checked in order by shared code; the reference reports the
  // lowest failing rule of all; a mode-1 payload has one order of checks for
  // every backend (FORMAT.md 4.6.5).
  const bool shared = (v.definite & ((1u << 14) - 1)) != 0;
  if (shared || reference || v.capacity)
    FUZZ_CHECK(got == v.first(), "%s: %s, expected %s", what, splitzip::status_name(got),
               splitzip::status_name(v.first()));
}

void check_single(const uint8_t* src, size_t size) {
  const SpecVerdict v = szfuzz::spec_check(src, size);
  if (v.header_ok && v.decoded_size > kMaxOut) return;
  const uint64_t out = v.header_ok ? v.decoded_size : 16;

  for (const char* backend : {static_cast<const char*>(nullptr), "reference"}) {
    splitzip::DecompressOptions o;
    o.backend = backend;
    Buf dst(out);
    const splitzip::Result r = splitzip::decompress(src, size, dst.data(), out, o);
    const bool is_ref = backend != nullptr || (r.backend && std::strcmp(r.backend, "reference") == 0);
    check_status(v, r.status, is_ref, backend ? "decompress[reference]" : "decompress");
    // v2 rule 19: the first block whose check fails, as the spec finds it.
    if (r.status == v.first() && r.status == Status::checksum_mismatch)
      FUZZ_CHECK(r.corrupt_block == v.corrupt_block, "corrupt_block %llu, spec %llu",
                 (unsigned long long)r.corrupt_block, (unsigned long long)v.corrupt_block);
    if (r.status != Status::checksum_mismatch)
      FUZZ_CHECK(r.corrupt_block == ~uint64_t{0}, "corrupt_block set with %s", splitzip::status_name(r.status));
    if (r.ok()) {
      FUZZ_CHECK(r.size == v.decoded_size, "size %llu, expected %llu", (unsigned long long)r.size,
                 (unsigned long long)v.decoded_size);
      FUZZ_CHECK(v.decoded_size == 0 || std::memcmp(dst.data(), v.output.data(), v.decoded_size) == 0,
                 "decoded bytes differ from the spec decode");
    }
    if (backend == nullptr) {
      // The C API is a second door to the same decoder: same status, same bytes.
      Buf cdst(out);
      sz_result cr{};
      const sz_status cs = sz_decompress(src, size, cdst.data(), out, nullptr, &cr);
      FUZZ_CHECK(static_cast<int>(cs) == static_cast<int>(r.status), "C API: %s, C++: %s",
                 sz_status_name(cs), splitzip::status_name(r.status));
      FUZZ_CHECK(cr.corrupt_block == r.corrupt_block, "C API corrupt_block differs");
      if (r.ok())
        FUZZ_CHECK(cr.size == r.size && std::memcmp(cdst.data(), dst.data(), r.size) == 0, "C API bytes differ");
    }
  }
  if (!v.header_ok) return;

  // Rule 12 (limit) and rule 13 (destination) on the same frame.
  if (v.decoded_size >= 2) {
    splitzip::DecompressOptions o;
    o.max_output_bytes = v.decoded_size - 1;
    Buf dst(v.decoded_size);
    const Status s = splitzip::decompress(src, size, dst.data(), v.decoded_size, o).status;
    FUZZ_CHECK(s == Status::limit_exceeded, "limit: %s", splitzip::status_name(s));
  }
  if (v.decoded_size >= 1) {
    Buf dst(v.decoded_size - 1);
    const Status s = splitzip::decompress(src, size, dst.data(), v.decoded_size - 1).status;
    FUZZ_CHECK(s == Status::dst_too_small, "short dst: %s", splitzip::status_name(s));
  }
  // Without checksum verification rule 19 drops out.
  {
    SpecOptions so;
    so.verify_checksum = false;
    const SpecVerdict nv = szfuzz::spec_check(src, size, so);
    splitzip::DecompressOptions o;
    o.verify_checksum = false;
    Buf dst(v.decoded_size);
    const splitzip::Result r = splitzip::decompress(src, size, dst.data(), v.decoded_size, o);
    check_status(nv, r.status, r.backend && std::strcmp(r.backend, "reference") == 0, "no-verify");
    if (r.ok())
      FUZZ_CHECK(v.decoded_size == 0 || std::memcmp(dst.data(), nv.output.data(), v.decoded_size) == 0,
                 "no-verify decode differs");
  }
}

// A stream of frames: walk it with the oracle, then compare decompress_frames.
void check_stream(const uint8_t* src, size_t size) {
  if (size == 0) return;
  std::vector<SpecVerdict> frames;
  uint64_t off = 0, total = 0;
  bool all_ok = true;
  while (off < size) {
    SpecVerdict v = szfuzz::spec_check(src + off, size - off);
    const bool ok = v.ok();
    const uint64_t fs = v.frame_size, ds = v.decoded_size;
    const bool header_ok = v.header_ok;
    frames.push_back(std::move(v));
    if (!ok) {
      all_ok = false;
      if (!header_ok) break;
    }
    if (!header_ok) break;
    total += ds;
    off += fs;
    if (total > kMaxOut) return;
  }

  Buf dst(total);
  const splitzip::Result r = splitzip::decompress_frames(src, size, dst.data(), total);
  if (all_ok) {
    FUZZ_CHECK(r.ok(), "decompress_frames: %s on a valid stream", splitzip::status_name(r.status));
    FUZZ_CHECK(r.size == total, "decompress_frames size %llu, expected %llu",
               (unsigned long long)r.size, (unsigned long long)total);
    uint64_t at = 0;
    for (const auto& f : frames) {
      FUZZ_CHECK(f.decoded_size == 0 || std::memcmp(dst.data() + at, f.output.data(), f.decoded_size) == 0,
                 "frame at output offset %llu differs", (unsigned long long)at);
      at += f.decoded_size;
    }
    // The output limit applies to the whole stream.
    if (total >= 2) {
      splitzip::DecompressOptions o;
      o.max_output_bytes = total - 1;
      Buf d2(total);
      const Status s = splitzip::decompress_frames(src, size, d2.data(), total, o).status;
      FUZZ_CHECK(s == Status::limit_exceeded, "stream limit: %s", splitzip::status_name(s));
    }
  } else {
    // Reject, with a status that some faulty frame of the stream allows.
    FUZZ_CHECK(!r.ok(), "decompress_frames accepted a stream with a bad frame");
    bool allowed = false;
    for (const auto& f : frames)
      if (!f.ok() && f.allows(r.status)) allowed = true;
    FUZZ_CHECK(allowed, "decompress_frames: %s not allowed by any faulty frame",
               splitzip::status_name(r.status));
  }
}

void check_all(const uint8_t* data, size_t size) {
  check_single(data, size);
  check_stream(data, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_all(data, size);
  if (size >= 64) {
    std::vector<uint8_t> fixed(data, data + size);
    if (szfuzz::repair_header_checks(fixed.data(), size)) check_all(fixed.data(), size);
  }
  return 0;
}
