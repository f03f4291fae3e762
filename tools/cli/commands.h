/* SPDX-License-Identifier: Apache-2.0 */
// The splitzip subcommands. Each returns an exit code (docs/CLI.md) or
// throws CliError.
#pragma once

#include <string>
#include <vector>

#include "tools/cli/options.h"
#include "tools/cli/tensor_input.h"

namespace szcli {

int cmd_calibrate(int argc, char** argv);
int cmd_compress(int argc, char** argv);
int cmd_decompress(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_verify(int argc, char** argv);
int cmd_bench(int argc, char** argv);

// --format/--dtype/--tensor, shared by the commands that read tensors.
std::vector<OptSpec> input_option_specs();
InputOptions input_options(const Args& a);
// How a frame is coded: --codebook, --backend, --(no-)checksum, --chunk-log2,
// --mode, --frame-size (compress and the command-less mode).
std::vector<OptSpec> coding_option_specs();
// The coding mode from --mode and zstd's level options (-1..-3, --fast[=N]:
// fast; -4..-22: capacity; --ultra: no effect); a level that disagrees with
// --mode is a usage error. Default: fast.
splitzip::Mode coding_mode_option(const Args& a, const char* command);
// Where the result goes and how: -T, -o, -c, --(no-)sync, -f, -k, --rm
// (compress, decompress and the command-less mode).
std::vector<OptSpec> output_option_specs();
// Appends b to a.
void add_specs(std::vector<OptSpec>& a, const std::vector<OptSpec>& b);

// Prints usage text to stdout and returns 0 when --help was given.
bool handle_help(const Args& a, const char* usage);

// -q: the progress line off; -q with -v is a usage error.
void quiet_option(const Args& a, const char* command);

// Non-negative --threads value.
int threads_option(const Args& a);

// -T/--threads of compress and decompress: frames coded at once (default 1,
// 0 = every online CPU).
uint32_t coder_threads_option(const Args& a);

// Loads a .szcb codebook file; throws CliError with the status on failure.
splitzip::Codebook load_codebook_file(const std::string& path);

// "bf16 [3]: 120 121 119" style list of a codebook's entries.
std::string codebook_text(const splitzip::Codebook& cb);

}  // namespace szcli
