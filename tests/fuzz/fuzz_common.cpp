// SPDX-License-Identifier: Apache-2.0
#include "fuzz_common.h"

#include <cstring>

namespace szfuzz {

CompressCase decode_case(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  CompressCase c;
  c.dtype = static_cast<splitzip::Dtype>(1 + in.u8() % 4);
  c.chunk_log2 = 6 + in.u8() % 10;
  const uint8_t mode = in.u8();
  c.checksum = mode & 1;
  c.user_codebook = mode & 2;
  c.codebook_raw = mode & 4;
  const bool synth = mode & 8;
  static const int kThreads[4] = {0, 1, 2, 0};
  c.threads = kThreads[(mode >> 4) & 3];
  c.codebook_dtype_mismatch = mode & 64;
  c.capacity = mode & 128;

  const bool five_bit = c.dtype == splitzip::Dtype::fp16 || c.dtype == splitzip::Dtype::fp8_e5m2;
  const uint32_t exp_mask = five_bit ? 31 : 255;
  const uint8_t count_byte = in.u8();
  uint8_t raw[16];
  for (auto& e : raw) e = in.u8();
  c.codebook.dtype = c.dtype;
  if (c.codebook_raw) {
    c.codebook.count = count_byte % 17;
    std::memcpy(c.codebook.entries, raw, 16);
  } else {
    // Distinct, in range, zero past count: always a valid codebook.
    c.codebook.count = static_cast<uint8_t>(1 + count_byte % 16);
    bool used[256] = {};
    for (uint32_t i = 0; i < c.codebook.count; ++i) {
      uint32_t e = raw[i] & exp_mask;
      while (used[e]) e = (e + 1) & exp_mask;
      used[e] = true;
      c.codebook.entries[i] = static_cast<uint8_t>(e);
    }
  }
  if (c.codebook_dtype_mismatch)
    c.codebook.dtype = static_cast<splitzip::Dtype>(1 + static_cast<uint32_t>(c.dtype) % 4);

  const uint32_t bytes = splitzip::dtype_bytes(c.dtype);
  if (synth) {
    // Exponents mostly from the codebook's entries, escapes at a chosen rate:
    // reaches many chunks and escape-heavy frames that raw bytes rarely hit.
    c.n = in.u32() % 70000;
    const uint32_t rate = in.u8();
    uint64_t x = (uint64_t{in.u32()} << 1) | 1;
    auto next = [&x] {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return x;
    };
    const uint32_t palette = c.codebook.count ? c.codebook.count : 1;
    c.data.resize(c.n * bytes);
    for (uint64_t i = 0; i < c.n; ++i) {
      const uint64_t r = next();
      uint32_t e = c.codebook.entries[(r >> 8) % palette] & exp_mask;
      if ((r & 255) < rate) e = static_cast<uint32_t>(r >> 40) & exp_mask;
      const auto m = static_cast<uint32_t>(r >> 16);  // sign and mantissa bits
      uint8_t* p = c.data.data() + i * bytes;
      switch (c.dtype) {
        case splitzip::Dtype::bf16: {
          const uint32_t v = (m & 0x807F) | (e << 7);
          p[0] = static_cast<uint8_t>(v);
          p[1] = static_cast<uint8_t>(v >> 8);
          break;
        }
        case splitzip::Dtype::fp16: {
          const uint32_t v = (m & 0x83FF) | (e << 10);
          p[0] = static_cast<uint8_t>(v);
          p[1] = static_cast<uint8_t>(v >> 8);
          break;
        }
        case splitzip::Dtype::fp32: {
          const uint32_t v = (static_cast<uint32_t>(r) & 0x807FFFFFu) | (e << 23);
          for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
          break;
        }
        case splitzip::Dtype::fp8_e4m3:
          p[0] = static_cast<uint8_t>((m & 0x87) | ((e & 15u) << 3));
          break;
        case splitzip::Dtype::fp8_e5m2:
          p[0] = static_cast<uint8_t>((m & 0x83) | (e << 2));
          break;
      }
    }
  } else {
    c.n = in.left() / bytes;
    c.data.assign(in.rest(), in.rest() + c.n * bytes);
  }
  return c;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> out;
  for (size_t i = 0; i < splitzip::backend_count(); ++i) {
    const char* name = splitzip::backend_name(i);
    if (name != nullptr && splitzip::backend_available(name)) out.emplace_back(name);
  }
  return out;
}

}  // namespace szfuzz
