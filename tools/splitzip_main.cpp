// SPDX-License-Identifier: Apache-2.0
// splitzip command-line tool. Commands live in tools/cli/cmd_*.cpp; this
// file dispatches and turns CliError into a one-line message and exit code.
#include <cstdio>
#include <cstring>
#include <new>

#include "splitzip/splitzip.hpp"
#include "splitzip/version.h"
#include "tools/cli/commands.h"
#include "tools/cli/errors.h"

namespace {

const char kUsage[] =
    "usage: splitzip COMMAND [options] ...\n"
    "  calibrate   build a codebook file from sample tensors\n"
    "  compress    compress a tensor file into splitzip frames\n"
    "  decompress  decode a stream of frames\n"
    "  inspect     print frame headers (--json for JSON)\n"
    "  verify      check a frame stream against its original, bit for bit\n"
    "  bench       throughput per backend next to memcpy\n"
    "  backends    list the backends of this build, and why any cannot run\n"
    "  -V, --version  print the library version, frame format versions and backends\n"
    "  -h, --help     print this help\n"
    "Run `splitzip COMMAND --help` for options. Exit codes: docs/CLI.md.\n";

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

// Like `zstd -V`: what this binary is and what it can do here.
int print_version() {
  std::printf("splitzip %s (library %s, ABI %u, licence Apache-2.0)\n", SZ_VERSION_STRING,
              splitzip::version(), splitzip::abi_version());
  std::printf("frame format: writes v%u, reads v%u..v%u\n", splitzip::kFormatVersion,
              splitzip::kMinFormatVersion, splitzip::kFormatVersion);
  std::printf("backends compiled in:");
  for (size_t i = 0; i < splitzip::backend_count(); ++i) std::printf(" %s", splitzip::backend_name(i));
  std::printf("\nbackends available:  ");
  for (size_t i = 0; i < splitzip::backend_count(); ++i)
    if (splitzip::backend_available(splitzip::backend_name(i))) std::printf(" %s", splitzip::backend_name(i));
  std::printf("\n");
  for (size_t i = 0; i < splitzip::backend_count(); ++i) {
    const char* n = splitzip::backend_name(i);
    const char* why = splitzip::backend_unavailable_reason(n);
    if (why != nullptr) std::printf("  %s: %s\n", n, why);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return szcli::kExitUsage;
  }
  const char* cmd = argv[1];
  if (!std::strcmp(cmd, "-h") || !std::strcmp(cmd, "--help") || !std::strcmp(cmd, "help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!std::strcmp(cmd, "-V") || !std::strcmp(cmd, "--version") || !std::strcmp(cmd, "version"))
    return print_version();
  try {
    if (!std::strcmp(cmd, "calibrate")) return szcli::cmd_calibrate(argc, argv);
    if (!std::strcmp(cmd, "compress")) return szcli::cmd_compress(argc, argv);
    if (!std::strcmp(cmd, "decompress")) return szcli::cmd_decompress(argc, argv);
    if (!std::strcmp(cmd, "inspect")) return szcli::cmd_inspect(argc, argv);
    if (!std::strcmp(cmd, "verify")) return szcli::cmd_verify(argc, argv);
    if (!std::strcmp(cmd, "bench")) return szcli::cmd_bench(argc, argv);
    if (!std::strcmp(cmd, "backends")) return list_backends();
    std::fprintf(stderr, "splitzip: unknown command '%s'\n%s", cmd, kUsage);
    return szcli::kExitUsage;
  } catch (const szcli::CliError& e) {
    std::fprintf(stderr, "splitzip: %s\n", e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "splitzip: %s: out of memory\n", cmd);
    return szcli::kExitInternal;
  }
}
