/* SPDX-License-Identifier: Apache-2.0 */
// Error reporting for the splitzip CLI: one exception type carrying the exit
// code, and the documented exit codes (docs/CLI.md).
#pragma once

#include <string>

#include "splitzip/splitzip.hpp"

namespace szcli {

// Exit codes. Stable: scripts and CI depend on them.
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,     // bad command line, unknown dtype, conflicting options
  kExitIo = 2,        // open/read/write/rename failed, output exists without -f
  kExitInvalid = 3,   // corrupt or invalid frame, malformed input file
  kExitMismatch = 4,  // verify: decoded bytes or re-encoded bitstream differ
  kExitLimit = 5,     // decompression-bomb guard or other size limit hit
  kExitBackend = 6,   // unknown or unavailable backend
  kExitInternal = 7,  // out of memory, device or internal error
};

// Thrown by command code; main() prints "splitzip: <message>" and exits.
// Temp outputs are removed by their destructors while it unwinds.
struct CliError {
  int code;
  std::string message;
};

[[noreturn]] void fail(int code, const std::string& message);

// Exit code for a library status (docs/CLI.md has the table).
int exit_code_for(splitzip::Status s);

// "BAD_MAGIC (not a splitzip frame)" style text for messages.
std::string status_text(splitzip::Status s);

// Throws CliError with `what: STATUS (message)` unless s is ok.
void check_status(splitzip::Status s, const std::string& what);

}  // namespace szcli
