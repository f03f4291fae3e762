/* SPDX-License-Identifier: Apache-2.0 */
// The tensor descriptor section (FORMAT.md 4.8): written after a frame's
// payload by the public compress() (backends/api.cpp), read and validated by
// read_tensor_desc(). Host memory only.
#pragma once

#include <cstdint>

#include "splitzip/splitzip.hpp"

namespace splitzip {

// Appends the section to the frame of frame_size bytes at frame (the
// capacity must hold both), sets TENSOR, frame_size and the header check.
// *new_size: the frame's size with the section.
Status attach_tensor_desc(uint8_t* frame, uint64_t frame_size, uint64_t capacity, const TensorDesc& t,
                          uint64_t* new_size);

}  // namespace splitzip
