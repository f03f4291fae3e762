/* SPDX-License-Identifier: Apache-2.0 */
// Deterministic synthetic data for tests, benchmarks and demos.
// Integer-only generation from an explicit seed: element i depends only on
// (seed, i, total n), so the same call gives the same bytes on every
// platform and any sub-range can be generated on its own (in parallel).
#pragma once

#include <cstdint>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::synth {

enum class Generator : uint8_t {
  gaussian_kv,     // bell-shaped values like real KV; escape rate ~0.05% vs top-16
  heavy_tail,      // 16-exponent body plus escapes at Params::escape_rate
  all_escape,      // every exponent outside Params::codebook (default body_codebook)
  random_bits,     // uniform random bit patterns
  special_values,  // NaN (payloads, both signs), +-Inf, denormals, +-0, extremes
  exponent_shift,  // gaussian_kv whose second half is scaled by 2^Params::shift
};

const char* generator_name(Generator g);  // "gaussian_kv", ...
bool parse_generator(const char* name, Generator* out);

struct Params {
  // heavy_tail: chance that an element's exponent comes from outside the
  // body. It equals the escape rate against the dynamic top-16 as long as
  // each outside exponent stays rarer than the rarest body exponent
  // (rate < ~0.13 for 5-bit-exponent dtypes, < ~0.7 for 8-bit ones).
  double escape_rate = 0.01;
  // all_escape: escapes relative to this codebook (its dtype must match).
  const Codebook* codebook = nullptr;
  // exponent_shift: binades the second half moves by (may be negative).
  int shift = 8;
};

// The 16 exponents of heavy_tail's body, most frequent first (also
// all_escape's default codebook).
Codebook body_codebook(Dtype dtype);

// Elements [first, first+count) of the n-element buffer described by
// (g, dtype, n, seed, params), written to dst (count * bytes bytes).
// invalid_argument for a bad dtype, range, null dst or a codebook whose
// dtype differs.
Status generate_range(Generator g, Dtype dtype, uint64_t n, uint64_t seed, const Params& params,
                      uint64_t first, uint64_t count, void* dst);

// The whole buffer; empty on invalid arguments.
std::vector<uint8_t> generate(Generator g, Dtype dtype, uint64_t n, uint64_t seed,
                              const Params& params = {});

// Round-to-nearest-even conversions (NaN stays NaN, quiet; overflow -> Inf;
// denormals of the target kept). Used to derive fp16/fp8/bf16 inputs from
// float32 data.
uint16_t f32_to_bf16(float f);
uint16_t f32_to_fp16(float f);
uint8_t f32_to_fp8_e5m2(float f);
uint8_t f32_to_fp8_e4m3(float f);  // nearest, ties to even, saturating at +-448 (E4M3 "fn")
float bf16_to_f32(uint16_t h);
float fp16_to_f32(uint16_t h);
float fp8_e5m2_to_f32(uint8_t h);
// n floats to dtype elements (fp32: a copy) at dst (n * bytes bytes).
void convert_f32(const float* src, uint64_t n, Dtype dtype, void* dst);

// The counter-based generator behind everything above (splitmix64 output
// function over seed and counter), exposed for tests that need random data.
uint64_t random_u64(uint64_t seed, uint64_t counter);

}  // namespace splitzip::synth
