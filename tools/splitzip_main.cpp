// SPDX-License-Identifier: Apache-2.0
// splitzip command-line tool. Commands live in tools/cli/cmd_*.cpp, the
// command-less zstd-like mode in tools/cli/zstd_mode.cpp; this file
// dispatches and turns CliError into a one-line message and exit code.
#include <cstdio>
#include <cstring>
#include <new>

#include "splitzip/splitzip.hpp"
#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/zstd_mode.h"

namespace {

int list_backends() {
  for (size_t i = 0; i < splitzip::backend_count(); ++i) {
    const char* n = splitzip::backend_name(i);
    const char* why = splitzip::backend_unavailable_reason(n);
    if (why == nullptr)
      std::printf("%-10s available\n", n);
    else
      std::printf("%-10s not available: %s\n", n, why);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* cmd = argc >= 2 ? argv[1] : "";
  if (!std::strcmp(cmd, "help")) {
    std::fputs(szcli::kTopUsage, stdout);
    return 0;
  }
  if (!std::strcmp(cmd, "version")) return szcli::print_version();
  try {
    if (!std::strcmp(cmd, "calibrate")) return szcli::cmd_calibrate(argc, argv);
    if (!std::strcmp(cmd, "compress")) return szcli::cmd_compress(argc, argv);
    if (!std::strcmp(cmd, "decompress")) return szcli::cmd_decompress(argc, argv);
    if (!std::strcmp(cmd, "inspect")) return szcli::cmd_inspect(argc, argv);
    if (!std::strcmp(cmd, "verify")) return szcli::cmd_verify(argc, argv);
    if (!std::strcmp(cmd, "bench")) return szcli::cmd_bench(argc, argv);
    if (!std::strcmp(cmd, "backends")) return list_backends();
    // No command: options and files, as zstd takes them. A file named like
    // a command needs a path: ./compress.
    return szcli::zstd_mode(argc, argv);
  } catch (const szcli::CliError& e) {
    std::fprintf(stderr, "splitzip: %s\n", e.message.c_str());
    if (e.code == szcli::kExitUsage && argc < 2) std::fputs(szcli::kTopUsage, stderr);
    return e.code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "splitzip: %s: out of memory\n", cmd);
    return szcli::kExitInternal;
  }
}
