/* SPDX-License-Identifier: Apache-2.0 */
// A splitzip Status travelling from C++ to Python as splitzip.SplitzipError.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "splitzip/splitzip.hpp"

namespace splitzip_py {

inline constexpr uint64_t kNoBlock = ~uint64_t{0};

class StatusError : public std::runtime_error {
 public:
  StatusError(splitzip::Status s, const std::string& detail, uint64_t block = kNoBlock)
      : std::runtime_error(detail), status(s), corrupt_block(block) {}
  splitzip::Status status;
  // CHECKSUM_MISMATCH on a v2 frame: the first corrupt checksum block.
  uint64_t corrupt_block;
};

// The message SplitzipError carries: the status message, the corrupt block
// if any, then " (<context>)".
std::string status_text(splitzip::Status s, const std::string& context = {}, uint64_t corrupt_block = kNoBlock);

// Throws StatusError(s) with "<context>" appended to the status message.
[[noreturn]] void raise_status(splitzip::Status s, const std::string& context = {},
                               uint64_t corrupt_block = kNoBlock);

// Throws when s is not ok.
inline void check(splitzip::Status s, const std::string& context = {}) {
  if (s != splitzip::Status::ok) raise_status(s, context);
}

// Throws when a codec call failed, with its corrupt checksum block if any.
inline void check(const splitzip::Result& r, const std::string& context = {}) {
  if (!r.ok()) raise_status(r.status, context, r.corrupt_block);
}

// Maps StatusError to splitzip._errors.SplitzipError (a ValueError).
void register_status_translator();

}  // namespace splitzip_py
