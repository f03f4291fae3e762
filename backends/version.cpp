// SPDX-License-Identifier: Apache-2.0
// The library version. One source: the CMake project version, written into
// the generated <splitzip/version.h> (include/splitzip/version.h.in).
#include "splitzip/splitzip.h"
#include "splitzip/splitzip.hpp"
#include "splitzip/version.h"

namespace splitzip {

const char* version() { return SZ_VERSION_STRING; }
uint32_t abi_version() { return SZ_ABI_VERSION; }

}  // namespace splitzip

extern "C" const char* sz_version(void) { return SZ_VERSION_STRING; }
extern "C" uint32_t sz_abi_version(void) { return SZ_ABI_VERSION; }
