/* SPDX-License-Identifier: Apache-2.0 */
// A splitzip Status travelling from C++ to Python as splitzip.SplitzipError.
#pragma once

#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

#include "splitzip/splitzip.hpp"

namespace splitzip_py {

class StatusError : public std::runtime_error {
 public:
  StatusError(splitzip::Status s, const std::string& detail)
      : std::runtime_error(detail), status(s) {}
  splitzip::Status status;
};

// Throws StatusError(s) with "<context>" appended to the status message.
[[noreturn]] void raise_status(splitzip::Status s, const std::string& context = {});

// Throws when s is not ok.
inline void check(splitzip::Status s, const std::string& context = {}) {
  if (s != splitzip::Status::ok) raise_status(s, context);
}

// Maps StatusError to splitzip._errors.SplitzipError (a ValueError).
void register_status_translator();

}  // namespace splitzip_py
