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

// Every available registry backend; emulator adapters join here.
const std::vector<Target>& targets();

struct CodecDtype {
  Mode mode;
  Dtype dtype;
};

// Whether the pair is a defined codec (one function so core codec_of can replace it).
bool defined_pair(Dtype d, Mode m);
std::vector<CodecDtype> codec_dtypes();

}  // namespace splitzip::conformance
