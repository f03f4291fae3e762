/* SPDX-License-Identifier: Apache-2.0 */
// Byte-for-byte checks of any backend against the scalar reference, for
// every backend's tests (host buffers).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

// Compresses src with `backend` and with "reference" (same options
// otherwise), requires identical frames, then decodes each frame with the
// other backend and requires the original bytes back.
::testing::AssertionResult matches_reference(const char* backend, Dtype dtype, const void* src,
                                             uint64_t n, const CompressOptions& opts = {});

// The same over every golden case (tests/golden/cases.txt), also checking
// each frame against the committed size and xxh64 (frames.txt).
::testing::AssertionResult golden_cases_match(const char* backend);

// Decodes a (possibly malformed) frame with `backend` and with "reference"
// and requires the same status, and on success the same output.
::testing::AssertionResult same_decode_result(const char* backend, const void* frame, uint64_t size,
                                              uint64_t dst_capacity);

}  // namespace splitzip::test
