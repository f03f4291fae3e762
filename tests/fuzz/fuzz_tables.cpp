// SPDX-License-Identifier: Apache-2.0
// The capacity table set parser (.szct, FORMAT.md 13) on arbitrary bytes:
// its status must be the first failing check of section 13, re-derived
// here from the text; an accepted set re-serializes to the same bytes, and
// its id is the hash of those bytes.
#include <cstring>
#include <vector>

#include <xxhash.h>

#include "core/capacity/tables.h"
#include "fuzz_common.h"

namespace {

using splitzip::Status;

Status expected(const uint8_t* b, size_t size) {
  if (size < 16) return Status::truncated;
  if (std::memcmp(b, "SZCT", 4) != 0) return Status::bad_magic;
  if (b[4] != 1) return Status::unsupported_version;
  uint64_t id = 0;
  for (int i = 7; i >= 0; --i) id = (id << 8) | b[size - 8 + static_cast<size_t>(i)];
  if (XXH3_64bits(b, size - 8) != id) return Status::header_corrupt;
  // dtypes with mode 1 (section 2; fp8_e4m3 since v3, 4.6.7): all five
  if (b[5] < 1 || b[5] > 5) return Status::bad_dtype;
  if (b[6] > 5 || b[7] != 0) return Status::reserved_bits;
  const size_t T = size_t{1} << b[6];
  if (size != 16 + 128 * T) return Status::size_mismatch;
  const uint32_t limit = b[5] == 2 || b[5] == 4 ? 32 : 256;  // 5-bit exponents; 8-bit ones and e4m3's whole byte
  for (size_t t = 0; t < T; ++t) {
    uint32_t kraft = 0, present = 0;
    for (uint32_t v = 0; v < 256; ++v) {
      const uint32_t l = (b[8 + 128 * t + v / 2] >> (4 * (v & 1))) & 15;
      if (l == 0) continue;
      if (l > 12 || v >= limit) return Status::bad_codebook;
      kraft += 4096u >> l;
      ++present;
    }
    if (present < 2 || kraft != 4096) return Status::bad_codebook;
  }
  return Status::ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  splitzip::CapTables ts;
  const Status s = splitzip::cap_tables_parse(data, size, &ts);
  const Status want = expected(data, size);
  FUZZ_CHECK(s == want, "cap_tables_parse: %s, expected %s", splitzip::status_name(s), splitzip::status_name(want));
  if (s == Status::ok) {
    std::vector<uint8_t> back(splitzip::cap_tables_serialized_size(ts));
    FUZZ_CHECK(back.size() == size, "serialized size %zu, input %zu", back.size(), size);
    splitzip::cap_tables_serialize(ts, back.data());
    FUZZ_CHECK(std::memcmp(back.data(), data, size) == 0, "a parsed set re-serializes to other bytes");
    FUZZ_CHECK(ts.id == XXH3_64bits(data, size - 8), "id is not the hash of the set's bytes");
  }
  return 0;
}
