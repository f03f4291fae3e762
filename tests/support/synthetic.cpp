// SPDX-License-Identifier: Apache-2.0
// Deterministic synthetic generators (see synthetic.h). Integer arithmetic
// and exact float operations only, so output does not depend on libm or the
// standard library's distributions.
#include "tests/support/synthetic.h"

#include <cmath>
#include <cstring>

#include "core/layout.h"
#include "core/reference.h"

namespace splitzip::synth {
namespace {

// gaussian_kv: Irwin-Hall sum of four 16-bit uniforms (sd ~ 37837 units),
// scaled by 2^-kGaussShift, gives values with sd ~0.29 like real K/V.
constexpr int kGaussShift = 17;
// Outliers (value times 2^2..2^8) at this rate per 2^32 draws make the
// escape rate against the dynamic top-16 land near 0.05%.
constexpr uint64_t kOutlierPer2p32 = 3006477;  // 7e-4 * 2^32

// heavy_tail's body: a bell over 16 consecutive binades (sum 100, rarest
// 1%), listed most frequent first so body_codebook() is ordered like a
// calibrated codebook and its first K entries are the K most common.
constexpr uint32_t kBodyWeights[16] = {13, 12, 12, 10, 10, 8, 8, 6, 5, 4, 3, 3, 2, 2, 1, 1};
constexpr uint32_t kBodyOffsets[16] = {9, 8, 10, 7, 11, 6, 12, 5, 13, 4, 3, 14, 2, 15, 0, 1};

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Exact multiply by 2^k through the exponent field of a normal float
// (values here stay normal; ±0 stays as is).
float times_pow2(float f, int k) {
  const uint32_t u = float_bits(f);
  const int e = static_cast<int>((u >> 23) & 0xFF);
  if (e == 0 || e == 255) return f;
  int ne = e + k;
  if (ne >= 255) return bits_float((u & 0x80000000u) | 0x7F800000u);  // overflow: Inf
  if (ne <= 0) return bits_float(u & 0x80000000u);                     // underflow: 0
  return bits_float((u & ~(0xFFu << 23)) | (static_cast<uint32_t>(ne) << 23));
}

float gaussian_value(uint64_t seed, uint64_t i) {
  const uint64_t u = random_u64(seed, 2 * i);
  const int32_t s = static_cast<int32_t>((u & 0xFFFF) + ((u >> 16) & 0xFFFF) + ((u >> 32) & 0xFFFF) +
                                         (u >> 48)) - 2 * 65535;
  float f = times_pow2(static_cast<float>(s), -kGaussShift);  // |s| < 2^18: exact
  const uint64_t v = random_u64(seed, 2 * i + 1);
  if ((v & 0xFFFFFFFFu) < kOutlierPer2p32) f = times_pow2(f, 2 + static_cast<int>((v >> 32) % 7));
  return f;
}

// Residual, exponent -> bits for dtype, via the shared traits.
template <class T>
void store_split(uint8_t* dst, uint64_t j, uint32_t e, uint32_t r) {
  const typename T::Bits v = T::join(e, r);
  std::memcpy(dst + j * T::kBytes, &v, sizeof v);
}

void store_float(Dtype d, uint8_t* dst, uint64_t j, float f) {
  switch (d) {
    case Dtype::bf16: {
      const uint16_t h = f32_to_bf16(f);
      std::memcpy(dst + 2 * j, &h, 2);
      break;
    }
    case Dtype::fp16: {
      const uint16_t h = f32_to_fp16(f);
      std::memcpy(dst + 2 * j, &h, 2);
      break;
    }
    case Dtype::fp32: std::memcpy(dst + 4 * j, &f, 4); break;
    case Dtype::fp8_e5m2: dst[j] = f32_to_fp8_e5m2(f); break;
    case Dtype::fp8_e4m3: dst[j] = f32_to_fp8_e4m3(f); break;  // the float generators only
  }
}

// Exponents outside a codebook, in ascending order; returns how many.
uint32_t complement(const Codebook& cb, uint32_t exp_values, uint8_t out[256]) {
  bool in[256] = {};
  for (uint32_t c = 0; c < cb.count; ++c) in[cb.entries[c]] = true;
  uint32_t k = 0;
  for (uint32_t e = 0; e < exp_values; ++e)
    if (!in[e]) out[k++] = static_cast<uint8_t>(e);
  return k;
}

template <class T>
void gen_split(Generator g, Dtype dtype, uint64_t seed, const Params& p, const Codebook& cb,
               uint64_t first, uint64_t count, uint8_t* dst) {
  constexpr uint32_t exp_values = 1u << T::kExpBits;
  constexpr uint32_t res_mask = (1u << (T::kManBits + 1)) - 1;
  uint8_t outside[256];
  const uint32_t n_outside = complement(cb, exp_values, outside);
  const Codebook body = body_codebook(dtype);
  // Escape threshold out of 2^32.
  const double rate = p.escape_rate < 0 ? 0 : p.escape_rate > 1 ? 1 : p.escape_rate;
  const uint64_t threshold = static_cast<uint64_t>(rate * 4294967296.0);
  for (uint64_t j = 0; j < count; ++j) {
    const uint64_t i = first + j;
    const uint64_t u = random_u64(seed, 2 * i);
    const uint64_t v = random_u64(seed, 2 * i + 1);
    const uint32_t r = static_cast<uint32_t>(v) & res_mask;
    uint32_t e = 0;
    if (g == Generator::all_escape) {
      e = outside[(u >> 32) % n_outside];
    } else {  // heavy_tail
      if ((u & 0xFFFFFFFFu) < threshold) {
        e = outside[(u >> 32) % n_outside];
      } else {
        uint32_t w = static_cast<uint32_t>((u >> 32) % 100);
        uint32_t k = 0;
        while (w >= kBodyWeights[k]) w -= kBodyWeights[k++];
        e = body.entries[k];
      }
    }
    store_split<T>(dst, j, e, r);
  }
}

template <class T>
void gen_special(uint64_t seed, uint64_t first, uint64_t count, uint8_t* dst) {
  constexpr uint32_t e_max = (1u << T::kExpBits) - 1;
  constexpr uint32_t man_mask = (1u << T::kManBits) - 1;
  constexpr uint32_t sign = 1u << T::kManBits;
  for (uint64_t j = 0; j < count; ++j) {
    const uint64_t i = first + j;
    const uint64_t u = random_u64(seed, 2 * i);
    const uint32_t m = static_cast<uint32_t>(u >> 32) & man_mask;
    const uint32_t s = (u >> 8) & 1 ? sign : 0;
    uint32_t e = 0, r = 0;
    switch (u % 10) {
      case 0: e = 0; r = 0; break;                                  // +0
      case 1: e = 0; r = sign; break;                               // -0
      case 2: e = e_max; r = s; break;                              // +-Inf
      case 3: e = e_max; r = s | (m ? m : 1); break;                // NaN, any payload
      case 4: e = e_max; r = s | (1u << (T::kManBits - 1)) | m; break;  // quiet NaN
      case 5: e = 0; r = s | (m ? m : 1); break;                    // denormal
      case 6: e = e_max - 1; r = s | man_mask; break;               // +-max finite
      case 7: e = 1; r = s; break;                                  // +-min normal
      case 8: e = 0; r = s | 1; break;                              // +-min denormal
      default: e = 1 + static_cast<uint32_t>((u >> 16) % (e_max - 1)); r = s | m; break;  // normal
    }
    store_split<T>(dst, j, e, r);
  }
}

}  // namespace

uint64_t random_u64(uint64_t seed, uint64_t counter) {
  // splitmix64: state = seed-derived start + counter * golden gamma.
  uint64_t z = seed * 0xD1B54A32D192ED03ull + (counter + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

const char* generator_name(Generator g) {
  switch (g) {
    case Generator::gaussian_kv: return "gaussian_kv";
    case Generator::heavy_tail: return "heavy_tail";
    case Generator::all_escape: return "all_escape";
    case Generator::random_bits: return "random_bits";
    case Generator::special_values: return "special_values";
    case Generator::exponent_shift: return "exponent_shift";
  }
  return "invalid";
}

bool parse_generator(const char* name, Generator* out) {
  if (name == nullptr || out == nullptr) return false;
  for (uint8_t k = 0; k <= static_cast<uint8_t>(Generator::exponent_shift); ++k) {
    const auto g = static_cast<Generator>(k);
    if (std::strcmp(name, generator_name(g)) == 0) {
      *out = g;
      return true;
    }
  }
  return false;
}

Codebook body_codebook(Dtype dtype) {
  Codebook cb;
  cb.dtype = dtype;
  if (!dtype_valid(dtype)) return cb;
  // A window of 16 binades around the values KV caches hold (|x| ~ 2^-12..2^3).
  const uint32_t lowest = geometry_of(static_cast<uint32_t>(dtype)).exp_bits == 5 ? 3 : 115;
  cb.count = 16;
  for (uint32_t k = 0; k < 16; ++k) cb.entries[k] = static_cast<uint8_t>(lowest + kBodyOffsets[k]);
  return cb;
}

Status generate_range(Generator g, Dtype dtype, uint64_t n, uint64_t seed, const Params& p,
                      uint64_t first, uint64_t count, void* dst_v) {
  if (!dtype_valid(dtype) || first > n || count > n - first || (dst_v == nullptr && count > 0))
    return Status::invalid_argument;
  if (p.codebook != nullptr && (p.codebook->dtype != dtype || validate_codebook(*p.codebook) != Status::ok))
    return Status::invalid_argument;
  auto* dst = static_cast<uint8_t*>(dst_v);
  const uint32_t bytes = dtype_bytes(dtype);
  switch (g) {
    case Generator::gaussian_kv:
    case Generator::exponent_shift:
      for (uint64_t j = 0; j < count; ++j) {
        const uint64_t i = first + j;
        float f = gaussian_value(seed, i);
        if (g == Generator::exponent_shift && i >= n / 2) f = times_pow2(f, p.shift);
        store_float(dtype, dst, j, f);
      }
      return Status::ok;
    case Generator::random_bits:
      for (uint64_t j = 0; j < count; ++j) {
        const uint64_t u = random_u64(seed, 2 * (first + j));
        for (uint32_t b = 0; b < bytes; ++b) dst[j * bytes + b] = static_cast<uint8_t>(u >> (8 * b));
      }
      return Status::ok;
    case Generator::heavy_tail:
    case Generator::all_escape: {
      const Codebook cb = p.codebook != nullptr && g == Generator::all_escape ? *p.codebook : body_codebook(dtype);
      with_traits(dtype, [&](auto t) { gen_split<decltype(t)>(g, dtype, seed, p, cb, first, count, dst); });
      return Status::ok;
    }
    case Generator::special_values:
      with_traits(dtype, [&](auto t) { gen_special<decltype(t)>(seed, first, count, dst); });
      return Status::ok;
  }
  return Status::invalid_argument;
}

std::vector<uint8_t> generate(Generator g, Dtype dtype, uint64_t n, uint64_t seed, const Params& p) {
  std::vector<uint8_t> out(n * dtype_bytes(dtype));
  if (generate_range(g, dtype, n, seed, p, 0, n, out.data()) != Status::ok) out.clear();
  return out;
}

// ---- float conversions -------------------------------------------------

uint16_t f32_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

namespace {

// Float32 -> a 5-bit-exponent format with M mantissa bits (fp16: 10,
// e5m2: 2), round to nearest even. Result in the low 6+M bits.
uint32_t f32_to_e5(float f, uint32_t M) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 31) << (M + 5);
  const uint32_t ax = u & 0x7FFFFFFFu;
  const uint32_t inf = 0x1Fu << M;
  if (ax >= 0x7F800000u) {
    if (ax == 0x7F800000u) return sign | inf;
    return sign | inf | (1u << (M - 1)) | ((ax >> (23 - M)) & ((1u << M) - 1));  // quiet NaN
  }
  // Half-way between max finite and 2^16 rounds to Inf.
  const uint32_t overflow = (142u << 23) | ((1u << 23) - (1u << (22 - M)));
  if (ax >= overflow) return sign | inf;
  if (ax < (113u << 23)) {  // below 2^-14: denormal (or zero) in the target
    if (ax <= ((112u - M) << 23)) return sign;  // <= half the smallest denormal: ties to even 0
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 136u - M - e;
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | q;
  }
  uint32_t r = ax - (112u << 23);  // rebias 127 -> 15
  const uint32_t cut = 23 - M;
  r += ((1u << (cut - 1)) - 1) + ((r >> cut) & 1u);
  return sign | (r >> cut);
}

float e5_to_f32(uint32_t h, uint32_t M) {
  const uint32_t sign = ((h >> (M + 5)) & 1u) << 31;
  const uint32_t e = (h >> M) & 0x1Fu;
  const uint32_t m = h & ((1u << M) - 1);
  if (e == 0x1F) return bits_float(sign | 0x7F800000u | (m << (23 - M)));
  if (e == 0) {
    if (m == 0) return bits_float(sign);
    // Denormal: m * 2^-(14+M), exact in float32.
    const float mag = times_pow2(static_cast<float>(m), -static_cast<int>(14 + M));
    return sign ? -mag : mag;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << (23 - M)));
}

}  // namespace

uint16_t f32_to_fp16(float f) { return static_cast<uint16_t>(f32_to_e5(f, 10)); }
uint8_t f32_to_fp8_e5m2(float f) { return static_cast<uint8_t>(f32_to_e5(f, 2)); }
uint8_t f32_to_fp8_e4m3(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7F;
  const double a = std::fabs(static_cast<double>(f));
  int k = 0;
  std::frexp(a, &k);  // a = m * 2^k, m in [0.5, 1)
  int e = k - 1;      // a = 1.f * 2^e
  uint32_t code;
  if (a == 0) {
    code = 0;
  } else if (e < -6) {  // subnormal: q * 2^-9 (q = 8 is 2^-6, the first normal code)
    code = static_cast<uint32_t>(std::nearbyint(std::ldexp(a, 9)));
  } else {
    uint32_t q = static_cast<uint32_t>(std::nearbyint((std::ldexp(a, -e) - 1.0) * 8.0));
    if (q == 8) q = 0, ++e;
    code = e + 7 > 15 ? 0x7E : (static_cast<uint32_t>(e + 7) << 3) | q;
  }
  return static_cast<uint8_t>(sign | (code > 0x7E ? 0x7E : code));  // saturating (E4M3 "fn")
}
float bf16_to_f32(uint16_t h) { return bits_float(uint32_t{h} << 16); }
float fp16_to_f32(uint16_t h) { return e5_to_f32(h, 10); }
float fp8_e5m2_to_f32(uint8_t h) { return e5_to_f32(h, 2); }

void convert_f32(const float* src, uint64_t n, Dtype dtype, void* dst) {
  auto* d = static_cast<uint8_t*>(dst);
  for (uint64_t i = 0; i < n; ++i) store_float(dtype, d, i, src[i]);
}

}  // namespace splitzip::synth
