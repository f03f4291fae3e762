/* SPDX-License-Identifier: Apache-2.0 */
// Benchmark inputs. Sizes are known at registration (benchmark names carry
// the byte count); the bytes are read or generated on first use and kept.
//   kv_l1-4     bundled stories260K KV, layers 1-4, K and V concatenated (BF16)
//   kv_l0k      layer-0 K (BF16)
//   kv_l0v      layer-0 V (BF16): a function of the token id, so it repeats
//               per token and flatters LZ peers; reported apart
//   kv_l2-f32   layer-2 K and V before BF16 rounding (FP32)
//   kv_l2-fp16  the same rounded to FP16, kv_l2-fp8 to FP8 E5M2 (nearest even)
//   synth       synthetic KV-like BF16 (tests/support/synthetic.h gaussian_kv), the
//               paper's 256M elements by default: the input of the targets
//   synth-esc1  synthetic BF16 with 1% escapes (heavy_tail), the upper part
//               of the paper's 0.1-1.2% range on real KV
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_config.h"
#include "splitzip/splitzip.hpp"
#include "tests/support/synthetic.h"

namespace splitzip_bench {

enum class Source { files, f32_files, synthetic };

struct InputSpec {
  std::string name;
  splitzip::Dtype dtype = splitzip::Dtype::bf16;
  uint64_t n_elems = 0;
  Source source = Source::files;
  // files: raw elements; f32_files: float32 converted to dtype. Concatenated in order.
  std::vector<std::string> files;
  splitzip::synth::Generator generator = splitzip::synth::Generator::gaussian_kv;
  splitzip::synth::Params params;
  uint64_t seed = 2605;  // fixed: every run measures the same bytes
  // Also run the checksum and dynamic-codebook variants (main inputs only,
  // to keep the full run short).
  bool variants = false;
  uint64_t bytes() const { return n_elems * splitzip::dtype_bytes(dtype); }
};

// The inputs the configuration selects, sized from the files on disk. A
// missing data file drops its input with a message on stderr.
std::vector<InputSpec> list_inputs(const Config& cfg);

// The input's bytes (64-byte aligned), loaded or generated on first call.
// Null with *error set when a file cannot be read or memory runs out.
const uint8_t* input_data(const InputSpec& in, std::string* error);

}  // namespace splitzip_bench
