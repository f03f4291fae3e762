/* SPDX-License-Identifier: Apache-2.0 */
// Byte-for-byte checks of any backend against the scalar reference, for
// every backend's tests (host buffers).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace splitzip::test {

// The reference oracle's frame of `in` (whole elements of d) in that mode;
// a test failure and an empty frame when the oracle refuses it.
std::vector<uint8_t> reference_frame(Dtype d, const std::vector<uint8_t>& in, Mode mode, bool checksum);

// Compresses src with the backend's compress_frame and with
// reference_compress (same options otherwise; opts.backend is ignored),
// requires identical frames (also at capacity = frame size), then decodes
// each frame with the other one's decompress_frame and requires the original
// bytes back and nothing written past them.
::testing::AssertionResult matches_reference(const char* backend, Dtype dtype, const void* src,
                                             uint64_t n, const CompressOptions& opts = {});

// Every v2 golden case (tests/golden/v2/cases.txt): the backend's frame must
// equal the committed bytes (sz/NAME.sz where committed, and the size and
// xxh64 of frames.txt for every case), then matches_reference.
::testing::AssertionResult golden_cases_match(const char* backend);

// Decodes a (possibly malformed) frame with the backend's decompress_frame
// and with reference_decompress and requires the same status and
// corrupt_block, and on success the same output.
::testing::AssertionResult same_decode_result(const char* backend, const void* frame, uint64_t size,
                                              uint64_t dst_capacity);

}  // namespace splitzip::test
