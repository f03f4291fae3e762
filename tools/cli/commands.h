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

// Loads a table set file (`calibrate --mode capacity`); throws CliError with
// the status on failure. load_tables_files: every --tables value, in order.
splitzip::TableSet load_tables_file(const std::string& path);
std::vector<splitzip::TableSet> load_tables_files(const Args& a);

// coding_mode_option, where a --tables set makes the mode capacity (a fast
// mode asked for by --mode or a level is then a usage error, as is more
// than one set).
splitzip::Mode tables_mode_option(const Args& a, const char* command, bool have_tables);

// A table set id as 16 hex digits, as inspect prints it.
std::string tables_id_text(uint64_t id);
// What MISSING_TABLES means for a frame naming set `id`, and the flag to pass.
std::string missing_tables_hint(uint64_t id);

// "bf16 [3]: 120 121 119" style list of a codebook's entries.
std::string codebook_text(const splitzip::Codebook& cb);

}  // namespace szcli
