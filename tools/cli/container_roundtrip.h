/* SPDX-License-Identifier: Apache-2.0 */
// Files that come back as they went in (docs/CLI.md "Containers"): compress
// cuts a .npy or whole .safetensors payload into frames and records the
// file's own header in the first frame's tensor descriptor (FORMAT.md 4.8,
// container kind 1 or 2); decompress writes that header back before the
// frames' data and checks that the container's payload is complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "tools/cli/tensor_formats.h"

namespace szcli {

// One frame of a compress run: bytes [off, off + bytes) of the payload,
// coded as dtype.
struct PlannedFrame {
  uint64_t off = 0, bytes = 0;
  splitzip::Dtype dtype = splitzip::Dtype::bf16;
};

// The frames of a payload of known size: each part (a whole safetensors
// file) or the one tensor cut into frames of `frame_elems(dtype)` elements;
// an empty payload is one empty frame.
std::vector<PlannedFrame> plan_frames(const TensorView& v, uint64_t (*frame_elems)(splitzip::Dtype, uint64_t),
                                      uint64_t frame_size_option);

// The descriptor that restores a .npy (kind 1) or whole .safetensors file
// (kind 2) in front of frame `first`; header: the file's header bytes
// (v.header_size of them). False when v is neither (raw input, --tensor).
// Throws CliError(kExitInvalid), its message starting with `where`, when the
// header cannot be recorded.
bool container_descriptor(const TensorView& v, InputFormat fmt, const uint8_t* header, const PlannedFrame& first,
                          splitzip::TensorDesc* out, const std::string& where);

// Decompress side: feed every frame in stream order. A frame with a
// container descriptor starts a container: its header is written first,
// then the following frames must decode to exactly its payload size
// (a .npy: total elements x dtype bytes; a safetensors file: the end of its
// last tensor). After that the stream may go on with any frames
// (concatenation: the output is each part's output in turn).
class ContainerRestorer {
 public:
  // frame: the whole frame (frame_size bytes) when fi.has_tensor, else may
  // be null. Returns the bytes to write before the frame's data. Throws
  // CliError (exit 3) for a bad descriptor or a frame that does not fit
  // the open container.
  std::string next(const splitzip::FrameInfo& fi, const uint8_t* frame, uint64_t index, uint64_t offset,
                   const std::string& what);
  // Throws CliError (exit 3, TRUNCATED) when the stream ends inside a
  // container's payload.
  void finish(const std::string& what) const;

 private:
  uint64_t left_ = 0;  // payload bytes the open container still needs
  uint64_t start_index_ = 0;
};

}  // namespace szcli
