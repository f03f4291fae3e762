// The scalar reference codec (FORMAT.md in code) and its shared helpers.
#pragma once

#include <cstdint>

#include "backends/backend.h"
#include "core/dtype_traits.h"

namespace splitzip {

// Calls f(Traits{}) for the traits struct of a valid dtype; returns false for
// an invalid one.
template <class F>
bool with_traits(Dtype d, F&& f) {
  switch (d) {
    case Dtype::bf16: f(Bf16Traits{}); return true;
    case Dtype::fp16: f(Fp16Traits{}); return true;
    case Dtype::fp32: f(Fp32Traits{}); return true;
    case Dtype::fp8_e5m2: f(Fp8E5M2Traits{}); return true;
  }
  return false;
}

// Adds the exponent counts of n elements to counts[256] (scalar).
void add_exponent_counts(Dtype dtype, const void* src, uint64_t n, uint64_t counts[256]);

// Encodes streams 1..6 (FORMAT.md 4.2) of job.src into job.frame.
Status reference_encode(EncodeJob& job);

// Decodes streams 1..6, enforcing rules 14-18 and reporting the lowest
// failing rule. Inter-stream gap bytes are checked by the frame layer.
Status reference_decode(const DecodeJob& job);

}  // namespace splitzip
