/* SPDX-License-Identifier: Apache-2.0 */
// Opens an input file of any supported container and returns the element
// data to compress, checked against the dtype and the container header.
#pragma once

#include <memory>
#include <string>

#include "tools/cli/file_io.h"
#include "tools/cli/tensor_formats.h"

namespace szcli {

struct InputOptions {
  std::string format;  // "", "raw", "npy" or "safetensors"; "" = by extension
  DtypeHint hint;      // from --dtype
  std::string tensor;  // --tensor for safetensors
  // compress: a .safetensors file without --tensor is taken whole (other
  // commands want one tensor: the only one, else --tensor).
  bool whole_file = false;
};

class TensorInput {
 public:
  const TensorView& view() const { return view_; }
  InputFormat format() const { return format_; }
  const std::string& path() const { return bytes_.path(); }
  // The whole input file (the container header sits at view().header_off).
  const uint8_t* file_data() const { return bytes_.data(); }

  // Throws CliError: kExitIo (cannot read), kExitUsage (dtype unknown),
  // kExitInvalid (malformed container or size). align: copy a payload that
  // is not naturally aligned (for callers that use view().data in place).
  static TensorInput load(const std::string& path, const InputOptions& opt, bool align = true);

  // True when the file is mapped and the payload is its bytes
  // [*offset, *offset + view().bytes): a streaming reader can then pread the
  // payload from the file instead of touching the mapping.
  bool payload_in_file(uint64_t* offset) const;

 private:
  InputBytes bytes_;
  InputFormat format_ = InputFormat::raw;
  TensorView view_;
  std::unique_ptr<uint8_t[]> aligned_;  // copy when the data is misaligned
  uint64_t payload_off_ = 0;            // of the payload in the file
};

// Extension the CLI gives raw files of a dtype (".bf16", ".f16", ".f32", ".e5m2").
const char* dtype_extension(splitzip::Dtype d);

// Bytes per element per stream part, for the predicted ratio
// bytes / (k + w3/8 + 1/2 + 3e): 2/(1.5+3e) for bf16.
double predicted_ratio(splitzip::Dtype d, double escape_rate);

}  // namespace szcli
