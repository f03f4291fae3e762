// SPDX-License-Identifier: Apache-2.0
// Every available backend against every other (FORMAT.md 11).
// Byte 0 picks the mode:
//   even: the rest is a compress case (fuzz_common.h). Each backend, forced
//         with options.backend, must give the same status and the same frame
//         bytes; each backend must then decode that frame to the input.
//         A capacity case with a raw codebook (its entries otherwise unused
//         in mode 1) codes with a table set (FORMAT.md 4.9) calibrated on a
//         prefix of the input whose length and T the codebook bytes give:
//         shared and own-table blocks; every backend writes the same bytes,
//         decodes them with the set and reports MISSING_TABLES without it.
//   odd:  the rest is one frame (header checks repaired
//         when bit 1 is set, checksum verification off when bit 2 is set,
//         bits 3-4 the decode thread count 0..3).
//         Each backend must agree on accept or reject and on the output;
//         the status must be one FORMAT.md section 9 allows for the frame
//         (rules 14-19 may run in any order, so a frame with several faults
//         can get different statuses), the exact lowest rule for the
//         reference, and the same everywhere when only one status is
//         allowed. Mode-1 frames (4.6) have one order of checks: every
//         backend gives the spec oracle's first failing check.
// Three readings meet: the backends, the reference and the spec oracle
// (tests/fuzz/spec_oracle.cpp, written from FORMAT.md), in both modes.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "spec_oracle.h"

namespace {

using splitzip::Status;

// A forced backend that cannot take host memory here is skipped, not compared.
bool skipped(Status s) { return s == Status::backend_unavailable || s == Status::unsupported_memory; }

// Backends that implement the capacity mode (FORMAT.md 4.6) must never answer
// UNSUPPORTED_MODE; any other backend may, and is then left out of the
// mode-1 comparison.
bool lacks_capacity(const std::string& name, Status s) {
  if (s != Status::unsupported_mode) return false;
  for (const char* has : {"reference", "cpu", "kokkos", "cuda"})
    if (name == has) return false;
  return true;
}

void encode_mode(const uint8_t* data, size_t size, const std::vector<std::string>& backends) {
  const szfuzz::CompressCase c = szfuzz::decode_case(data, size);
  const uint64_t bound = splitzip::compress_bound(c.dtype, c.n);
  const uint64_t in_bytes = c.n * splitzip::dtype_bytes(c.dtype);
  const void* src = c.data.empty() ? static_cast<const void*>(&c) : c.data.data();

  // The table set: T = 2^(count mod 6), calibrated on the first 1 + k mod n
  // elements (a short prefix lacks values later blocks have).
  splitzip::TableSet set;
  bool with_set = false;
  if (c.capacity && c.codebook_raw && c.n > 0) {
    const uint64_t k = (uint64_t{c.codebook.entries[0]} << 16) | (uint64_t{c.codebook.entries[1]} << 8) |
                       c.codebook.entries[2];
    const void* bufs[1] = {src};
    const uint64_t ns[1] = {1 + k % c.n};
    with_set = splitzip::calibrate_tables(c.dtype, bufs, ns, 1, &set, 1u << (c.codebook.count % 6)) == Status::ok;
    FUZZ_CHECK(with_set, "calibrate_tables fails on %llu elements", (unsigned long long)ns[0]);
  }

  std::vector<uint8_t> first;
  Status first_status = Status::ok;
  std::string first_name;
  for (const std::string& name : backends) {
    splitzip::CompressOptions o;
    o.codebook = c.user_codebook ? &c.codebook : nullptr;
    o.chunk_log2 = c.chunk_log2;
    o.checksum = c.checksum;
    o.threads = c.threads;
    o.backend = name.c_str();
    o.mode = c.capacity ? splitzip::Mode::capacity : splitzip::Mode::fast;
    o.tables = with_set ? &set : nullptr;
    std::vector<uint8_t> dst(bound);
    const splitzip::Result r = splitzip::compress(c.dtype, src, c.n, dst.data(), dst.size(), o);
    if (skipped(r.status) || (c.capacity && lacks_capacity(name, r.status))) continue;
    FUZZ_CHECK(r.backend == nullptr || name == r.backend, "forced %s, ran %s", name.c_str(), r.backend);
    if (r.ok()) dst.resize(r.size);
    else dst.clear();
    if (first_name.empty()) {
      first = dst;
      first_status = r.status;
      first_name = name;
      continue;
    }
    FUZZ_CHECK(r.status == first_status, "compress status: %s gives %s, %s gives %s", first_name.c_str(),
               splitzip::status_name(first_status), name.c_str(), splitzip::status_name(r.status));
    FUZZ_CHECK(dst == first, "compress bytes differ between %s and %s (sizes %zu, %zu)",
               first_name.c_str(), name.c_str(), first.size(), dst.size());
  }
  if (first_status != Status::ok || first_name.empty()) return;

  const bool tables_frame = first.size() >= 64 && (first[6] & 8) != 0;  // FORMAT.md 4.9
  FUZZ_CHECK(!tables_frame || with_set, "a TABLES frame without a set");
  for (const std::string& name : backends) {
    splitzip::DecompressOptions o;
    o.backend = name.c_str();
    o.tables = with_set ? &set : nullptr;
    o.n_tables = with_set ? 1 : 0;
    std::vector<uint8_t> back(in_bytes + 1);
    const splitzip::Result r = splitzip::decompress(first.data(), first.size(), back.data(), in_bytes, o);
    if (skipped(r.status) || lacks_capacity(name, r.status)) continue;
    FUZZ_CHECK(r.ok() && r.size == in_bytes, "%s cannot decode the common frame: %s", name.c_str(),
               splitzip::status_name(r.status));
    FUZZ_CHECK(in_bytes == 0 || std::memcmp(back.data(), src, in_bytes) == 0, "%s decodes wrongly",
               name.c_str());
    if (tables_frame) {  // without the set: never decoded
      splitzip::DecompressOptions none;
      none.backend = name.c_str();
      const splitzip::Result m = splitzip::decompress(first.data(), first.size(), back.data(), in_bytes, none);
      FUZZ_CHECK(m.status == Status::missing_tables, "%s without the set: %s", name.c_str(),
                 splitzip::status_name(m.status));
    }
  }
  // The third reading: the spec oracle decodes the common frame to the input
  // (a TABLES frame: it has no set, so MISSING_TABLES).
  const szfuzz::SpecVerdict v = szfuzz::spec_check(first.data(), first.size());
  if (tables_frame) {
    FUZZ_CHECK(v.tables && v.first() == Status::missing_tables, "spec oracle on a TABLES frame: %s",
               splitzip::status_name(v.first()));
    return;
  }
  FUZZ_CHECK(v.ok(), "spec oracle rejects the common frame: %s", splitzip::status_name(v.first()));
  FUZZ_CHECK(in_bytes == 0 || (v.output.size() == in_bytes && std::memcmp(v.output.data(), src, in_bytes) == 0),
             "spec oracle decodes the common frame wrongly");
}

void frame_mode(uint8_t mode, const uint8_t* data, size_t size, const std::vector<std::string>& backends) {
  std::vector<uint8_t> buf(data, data + size);
  if (mode & 2) szfuzz::repair_header_checks(buf.data(), buf.size());
  szfuzz::SpecOptions so;
  so.verify_checksum = !(mode & 4);
  const szfuzz::SpecVerdict v = szfuzz::spec_check(buf.data(), buf.size(), so);
  if (v.header_ok && v.decoded_size > (uint64_t{8} << 20)) return;
  const uint64_t cap = v.header_ok ? v.decoded_size : 16;

  bool have_first = false;
  Status first_status = Status::ok;
  std::string first_name;
  for (const std::string& name : backends) {
    splitzip::DecompressOptions o;
    o.backend = name.c_str();
    o.verify_checksum = so.verify_checksum;
    o.threads = (mode >> 3) & 3;  // parallel decoders must report like serial ones
    std::vector<uint8_t> dst(cap ? cap : 1);
    const splitzip::Result r = splitzip::decompress(buf.data(), buf.size(), dst.data(), cap, o);
    if (skipped(r.status) || (v.capacity && lacks_capacity(name, r.status))) continue;
    FUZZ_CHECK(v.allows(r.status), "%s: %s not allowed (lowest rule %s)", name.c_str(),
               splitzip::status_name(r.status), splitzip::status_name(v.first()));
    // The reference reports the lowest failing rule; in mode 1 every backend
    // reports the first failing check of FORMAT.md 4.6.5.
    if (name == "reference" || v.capacity)
      FUZZ_CHECK(r.status == v.first(), "%s: %s, expected %s", name.c_str(), splitzip::status_name(r.status),
                 splitzip::status_name(v.first()));
    // Every backend names the same first bad checksum block as the spec.
    if (r.status == Status::checksum_mismatch && v.first() == Status::checksum_mismatch)
      FUZZ_CHECK(r.corrupt_block == v.corrupt_block, "%s: corrupt_block %llu, spec %llu", name.c_str(),
                 (unsigned long long)r.corrupt_block, (unsigned long long)v.corrupt_block);
    if (r.ok())
      FUZZ_CHECK(r.size == v.decoded_size &&
                     (v.decoded_size == 0 || std::memcmp(dst.data(), v.output.data(), v.decoded_size) == 0),
                 "%s output differs from the spec decode", name.c_str());
    if (!have_first) {
      have_first = true;
      first_status = r.status;
      first_name = name;
    } else {
      FUZZ_CHECK(r.ok() == (first_status == Status::ok), "accept/reject: %s gives %s, %s gives %s",
                 first_name.c_str(), splitzip::status_name(first_status), name.c_str(),
                 splitzip::status_name(r.status));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> backends = szfuzz::available_backends();
  if (size == 0) return 0;
  if (data[0] & 1) frame_mode(data[0], data + 1, size - 1, backends);
  else encode_mode(data + 1, size - 1, backends);
  return 0;
}
