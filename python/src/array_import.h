/* SPDX-License-Identifier: Apache-2.0 */
// Turns any buffer-protocol object or DLPack producer into a flat view:
// pointer, byte size, device and element type, without copying.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>

#include "splitzip/splitzip.hpp"

namespace splitzip_py {

namespace nb = nanobind;

// DLPack device types we accept (dlpack.h DLDeviceType).
inline constexpr int32_t kDLCPU = 1;
inline constexpr int32_t kDLCUDA = 2;
inline constexpr int32_t kDLCUDAHost = 3;
inline constexpr int32_t kDLCUDAManaged = 13;

struct ArrayRef {
  nb::ndarray<nb::ro> ro;  // holds the export alive (read-only import)
  nb::ndarray<> rw;        // or this one (writable import)
  void* data = nullptr;
  uint64_t nbytes = 0;
  int32_t device_type = kDLCPU;
  int32_t device_id = 0;
  nb::dlpack::dtype dt{};
  bool host_readable() const {
    return device_type == kDLCPU || device_type == kDLCUDAHost || device_type == kDLCUDAManaged;
  }
};

// Imports obj without copying. `what` names the argument in error messages.
// Raises TypeError for objects that export neither protocol, and
// SplitzipError for non-contiguous, read-only (when writable) or
// unsupported-device arrays.
ArrayRef import_array(nb::handle obj, bool writable, const char* what);

// The splitzip dtype an element type stands for, if any (bf16, fp16, fp32,
// fp8_e5m2 by DLPack code and width).
std::optional<splitzip::Dtype> natural_dtype(const nb::dlpack::dtype& dt);

// Resolves the dtype of a source: `name` when given (the array must then be
// that float type or a raw integer buffer), else the array's own float type.
splitzip::Dtype resolve_dtype(const ArrayRef& a, const std::optional<std::string>& name,
                              const char* what);

// Parses a canonical dtype name ("bf16", ...) or raises INVALID_ARGUMENT.
splitzip::Dtype parse_dtype_name(const std::string& name);

// Element count of a source of dtype d; raises when the bytes do not divide.
uint64_t element_count(const ArrayRef& a, splitzip::Dtype d, const char* what);

// True when the buffer may hold values of dtype d: the same float type, or a
// raw integer buffer (uint8/int8, or an integer of the same width).
bool storage_compatible(const nb::dlpack::dtype& dt, splitzip::Dtype d);

std::string describe(const nb::dlpack::dtype& dt);

}  // namespace splitzip_py
