/* SPDX-License-Identifier: Apache-2.0 */
// The one list of conformance targets (every registry backend available in
// this process) and of codec x dtype pairs. A backend added to the registry
// appears in every conformance test without editing the tests.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.h"

namespace splitzip::conformance {

struct Target {
  std::string name;
  const Backend* backend;
};

// Every available registry backend that takes host memory, then the CUDA
// kernel emulator (targets.cpp), which runs the CUDA kernels' logic here.
const std::vector<Target>& targets();
// How many of targets() come from the registry (the others are emulators).
size_t registry_target_count();

struct CodecDtype {
  Mode mode;
  Dtype dtype;
};

std::vector<CodecDtype> codec_dtypes();

}  // namespace splitzip::conformance
