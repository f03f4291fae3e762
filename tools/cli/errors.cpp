// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/errors.h"

namespace szcli {

using splitzip::Status;

void fail(int code, const std::string& message) { throw CliError{code, message}; }

int exit_code_for(Status s) {
  switch (s) {
    case Status::ok:
      return kExitOk;
    case Status::invalid_argument:
    case Status::undefined_mode:
    case Status::missing_tables:
      return kExitUsage;
    case Status::io_error:
      return kExitIo;
    case Status::limit_exceeded:
      return kExitLimit;
    case Status::unknown_backend:
    case Status::backend_unavailable:
    case Status::unsupported_memory:
    case Status::unsupported_mode:
      return kExitBackend;
    case Status::truncated:
    case Status::bad_magic:
    case Status::unsupported_version:
    case Status::header_corrupt:
    case Status::bad_dtype:
    case Status::reserved_bits:
    case Status::bad_chunk_size:
    case Status::bad_header:
    case Status::bad_codebook:
    case Status::size_mismatch:
    case Status::bad_padding:
    case Status::bad_escape_counts:
    case Status::bad_escape_position:
    case Status::bad_escape_value:
    case Status::bad_code:
    case Status::checksum_mismatch:
      return kExitInvalid;
    // The CLI sizes every buffer itself, so these mean a bug or a resource
    // failure, not bad input.
    case Status::dst_too_small:
    case Status::out_of_memory:
    case Status::device_error:
    case Status::internal_error:
    case Status::escape_overflow:
      return kExitInternal;
  }
  return kExitInternal;
}

std::string status_text(Status s) {
  std::string t = splitzip::status_name(s);
  t += " (";
  t += splitzip::status_message(s);
  t += ")";
  return t;
}

void check_status(Status s, const std::string& what) {
  if (s != Status::ok) fail(exit_code_for(s), what + ": " + status_text(s));
}

}  // namespace szcli
