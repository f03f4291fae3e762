/* SPDX-License-Identifier: Apache-2.0 */
// `splitzip [OPTIONS] [FILE...]` without a command, with zstd's habits:
// compress each FILE (or stdin), -d to decompress, -l to list, -t to test.
// Each file goes through the compress/decompress/inspect commands, so both
// ways share one implementation.
#pragma once

namespace szcli {

// The top-level --help text: commands, then the options of this mode.
extern const char kTopUsage[];

// Prints what `splitzip -V` prints; returns 0.
int print_version();

// Runs the command-less mode on argv[1..argc). Returns 0 when every file
// succeeded, else the exit code of the first file that failed.
int zstd_mode(int argc, char** argv);

}  // namespace szcli
