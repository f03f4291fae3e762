/* SPDX-License-Identifier: Apache-2.0 */
// fp8_e4m3 test inputs (cpu and CUDA backend tests, GPU golden manifest,
// CUDA bench): the core's synthetic generators cover the nibble-mode dtypes
// only. Deterministic, integer LCG and exact double arithmetic.
#pragma once

#include <cstdint>
#include <vector>

namespace splitzip::test {

// KV-like E4M3 bytes: exponents around 7; far_percent % of elements take a
// uniform exponent (mostly escapes under a top-7 codebook).
std::vector<uint8_t> e4m3_kv_bytes(uint64_t n, uint64_t seed, uint32_t far_percent = 4);
// Uniform bytes (every value, NaN included; escape-heavy: stored frames).
std::vector<uint8_t> e4m3_uniform_bytes(uint64_t n, uint64_t seed);
// Round to the nearest E4M3 "fn" value, ties to even, saturating at +-448.
uint8_t to_e4m3(double x);
// f32 values cast to E4M3 the way vLLM does: per-tensor scale amax/448.
std::vector<uint8_t> e4m3_scaled(const float* f, uint64_t n);

}  // namespace splitzip::test
