/* SPDX-License-Identifier: Apache-2.0 */
// Buffer comparison helpers that explain the first difference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace splitzip::test {

// Index of the first differing byte, or -1 (as uint64 max) when equal.
// Sizes that differ count as a difference at the shorter size.
inline constexpr uint64_t kNoDifference = ~uint64_t{0};
uint64_t first_difference(const void* a, uint64_t a_size, const void* b, uint64_t b_size);

// gtest assertion: equal sizes and bytes; the message names the first
// difference and a few bytes around it.
::testing::AssertionResult bytes_equal(const void* a, uint64_t a_size, const void* b, uint64_t b_size);
::testing::AssertionResult bytes_equal(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);

}  // namespace splitzip::test
