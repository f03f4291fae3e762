/* SPDX-License-Identifier: Apache-2.0 */
// Input containers: raw little-endian files, NumPy .npy and .safetensors.
// Parsers work on bytes already in memory and validate every header field
// against the buffer before pointing into it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace szcli {

enum class InputFormat { raw, npy, safetensors };

// The element data to compress, inside a buffer owned by the caller.
struct TensorView {
  splitzip::Dtype dtype = splitzip::Dtype::bf16;
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  uint64_t n_elems = 0;
  std::string what;  // e.g. "npy '<f2' shape (16, 512)"
  std::string name;  // safetensors tensor name, else empty
  // Containers, for the tensor descriptor (FORMAT.md 4.8) that restores the
  // file: the header bytes [header_off, header_off + header_size) of the
  // file (the whole .npy preamble; the safetensors JSON header without its
  // 8-byte length) and the shape.
  uint64_t header_off = 0, header_size = 0;
  std::vector<uint64_t> shape;
  bool fortran_order = false;
  // A whole .safetensors file: every non-empty tensor in data order, with
  // the dtype its bytes are framed as (floating tensors their own; any other
  // bytes fp8_e5m2, which codes every byte value losslessly).
  struct Part {
    std::string name;
    splitzip::Dtype dtype = splitzip::Dtype::fp8_e5m2;
    uint64_t begin = 0, end = 0;  // in the data area
  };
  std::vector<Part> parts;
  bool whole_file = false;
};

// Dtype the user asked for with --dtype, if any.
struct DtypeHint {
  bool given = false;
  splitzip::Dtype dtype = splitzip::Dtype::bf16;
};

// Dtype implied by a raw file's extension (.bf16 .f16 .fp16 .f32 .fp32 .fp8
// .e5m2), false when there is none.
bool dtype_from_extension(const std::string& path, splitzip::Dtype* out);
// .npy / .safetensors by extension, else raw.
InputFormat format_from_extension(const std::string& path);
const char* format_name(InputFormat f);
bool parse_format(const std::string& name, InputFormat* out);

// Each returns false and sets *error (one line, no trailing period) on any
// malformed, unsupported or inconsistent input.
bool parse_raw(const uint8_t* p, uint64_t size, splitzip::Dtype dtype, TensorView* out,
               std::string* error);
bool parse_npy(const uint8_t* p, uint64_t size, DtypeHint hint, TensorView* out,
               std::string* error);
// tensor: the name to select. Empty: with whole, the whole file (every
// tensor, in parts, with the header kept for a byte-exact round trip);
// without, the file's only tensor.
bool parse_safetensors(const uint8_t* p, uint64_t size, const std::string& tensor,
                       DtypeHint hint, TensorView* out, std::string* error, bool whole = false);

}  // namespace szcli
