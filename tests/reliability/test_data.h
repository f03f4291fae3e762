/* SPDX-License-Identifier: Apache-2.0 */
// Data shapes for the reliability tests: values built from chosen exponents,
// random bytes, and the bundled KV sample.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace szrel {

class Rng {
 public:
  explicit Rng(uint64_t seed) : x_(seed * 0x9E3779B97F4A7C15ull | 1) {}
  uint64_t next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return x_;
  }

 private:
  uint64_t x_;
};

inline bool five_bit(splitzip::Dtype d) {
  return d == splitzip::Dtype::fp16 || d == splitzip::Dtype::fp8_e5m2;
}

// Stores element i with exponent e and random sign/mantissa bits.
inline void put_value(splitzip::Dtype d, uint8_t* buf, uint64_t i, uint32_t e, uint64_t rnd) {
  switch (d) {
    case splitzip::Dtype::bf16: {
      const uint32_t v = (static_cast<uint32_t>(rnd) & 0x807F) | ((e & 0xFF) << 7);
      buf[2 * i] = static_cast<uint8_t>(v);
      buf[2 * i + 1] = static_cast<uint8_t>(v >> 8);
      break;
    }
    case splitzip::Dtype::fp16: {
      const uint32_t v = (static_cast<uint32_t>(rnd) & 0x83FF) | ((e & 0x1F) << 10);
      buf[2 * i] = static_cast<uint8_t>(v);
      buf[2 * i + 1] = static_cast<uint8_t>(v >> 8);
      break;
    }
    case splitzip::Dtype::fp32: {
      const uint32_t v = (static_cast<uint32_t>(rnd) & 0x807FFFFFu) | ((e & 0xFF) << 23);
      for (int k = 0; k < 4; ++k) buf[4 * i + k] = static_cast<uint8_t>(v >> (8 * k));
      break;
    }
    case splitzip::Dtype::fp8_e5m2:
      buf[i] = static_cast<uint8_t>((rnd & 0x83) | ((e & 0x1F) << 2));
      break;
    case splitzip::Dtype::fp8_e4m3:
      buf[i] = static_cast<uint8_t>((rnd & 0x87) | ((e & 0xF) << 3));
      break;
  }
}

// n elements whose exponents are exps(i), residual bits random.
template <class ExpOf>
std::vector<uint8_t> make_values(splitzip::Dtype d, uint64_t n, uint64_t seed, ExpOf exps) {
  std::vector<uint8_t> out(n * splitzip::dtype_bytes(d));
  Rng rng(seed);
  for (uint64_t i = 0; i < n; ++i) put_value(d, out.data(), i, exps(i, rng), rng.next());
  return out;
}

inline std::vector<uint8_t> random_bytes(uint64_t size, uint64_t seed) {
  std::vector<uint8_t> out(size);
  Rng rng(seed);
  for (auto& b : out) b = static_cast<uint8_t>(rng.next() >> 24);
  return out;
}

// A file of the bundled sample (data/kv/stories260k); empty if missing.
inline std::vector<uint8_t> load_sample(const std::string& name) {
  std::ifstream in(std::string(SPLITZIP_DATA_DIR) + "/" + name, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::vector<std::string> available_backends() {
  std::vector<std::string> out;
  for (size_t i = 0; i < splitzip::backend_count(); ++i)
    if (splitzip::backend_available(splitzip::backend_name(i))) out.emplace_back(splitzip::backend_name(i));
  return out;
}

constexpr splitzip::Dtype kAllDtypes[] = {splitzip::Dtype::bf16, splitzip::Dtype::fp16,
                                          splitzip::Dtype::fp32, splitzip::Dtype::fp8_e5m2};

}  // namespace szrel
