// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/zstd_mode.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "splitzip/splitzip.hpp"
#include "splitzip/version.h"
#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/progress.h"
#include "tools/cli/tensor_formats.h"

namespace szcli {

const char kTopUsage[] =
    "Usage: splitzip [OPTIONS] [FILE...]\n"
    "   or: splitzip -d [OPTIONS] [FILE...]\n"
    "   or: splitzip COMMAND [options] ...\n"
    "\n"
    "Without a command, as zstd: compress each FILE to FILE.sz, or with -d\n"
    "decompress each FILE.sz to FILE. With no FILE, or FILE '-', read stdin\n"
    "(when it is not a terminal) and write stdout.\n"
    "\n"
    "Commands:\n"
    "  calibrate   build a codebook (or, --mode capacity, a table set) file from\n"
    "              sample tensors\n"
    "  compress    compress a tensor file into splitzip frames\n"
    "  decompress  decode a stream of frames\n"
    "  inspect     print frame headers (--json for JSON)\n"
    "  verify      check a frame stream against its original, bit for bit\n"
    "  bench       throughput per backend next to memcpy\n"
    "  backends    list the backends of this build, and why any cannot run\n"
    "\n"
    "Options without a command (as zstd):\n"
    "  -z, --compress     compress (the default)\n"
    "  -d, --decompress   decompress\n"
    "  -l, --list         print each file's frames, as `splitzip inspect`\n"
    "  -t, --test         decode each file and check its checksums; write nothing\n"
    "  -c, --stdout       write to stdout (several files: one after another)\n"
    "  -o, --output OUT   output file; only with one input\n"
    "  -f, --force        overwrite outputs; allow compressed data to a terminal\n"
    "  -k, --keep         keep the inputs (the default)\n"
    "  -r, --recursive    a FILE that is a directory: every regular file below it\n"
    "                     (compressing skips *.sz; -d, -l and -t take only *.sz)\n"
    "  --rm               remove each input after its output is safely written\n"
    "  -q, --quiet        print errors only\n"
    "  -v, --verbose      more: backend, sizes, ratio, and the dtype a raw input is read as\n"
    "  -T, --threads N    frames coded in parallel (default 1; 0 = all CPUs)\n"
    "  --dtype D, --format F, --tensor NAME\n"
    "                     how to read the inputs, as for compress (a raw input with\n"
    "                     no dtype in its name, and stdin, is read as bf16)\n"
    "  --codebook F, --backend B, --checksum, --no-checksum, --chunk-log2 N,\n"
    "  --mode M, --frame-size SIZE, --sync, --no-sync\n"
    "                     as for compress (--backend, --sync, --no-sync also for -d)\n"
    "  --tables F         a table set from `splitzip calibrate --mode capacity`:\n"
    "                     compression codes with it (--mode capacity); -d and -t\n"
    "                     decode frames that name it (repeat for several sets)\n"
    "  -1..-22, --fast[=N], --ultra\n"
    "                     zstd's levels: -1..-3 and --fast are --mode fast, -4..-22\n"
    "                     --mode capacity; --ultra changes nothing (compression only)\n"
    "  --max-size SIZE    as for decompress (-d, -t)\n"
    "  -V, --version      print the library version, frame format versions and backends\n"
    "  -h, --help         print this help\n"
    "Run `splitzip COMMAND --help` for a command's options. Exit codes: docs/CLI.md;\n"
    "with several files, the code of the first one that failed.\n";

int print_version() {
  std::printf("splitzip %s (library %s, ABI %u, licence Apache-2.0)\n", SZ_VERSION_STRING,
              splitzip::version(), splitzip::abi_version());
  std::printf("frame format: writes v2..v%u, reads v%u..v%u\n", splitzip::kFormatVersion,
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

namespace {

enum class Op { compress, decompress, list, test };

const char* op_name(Op op) {
  switch (op) {
    case Op::compress: return "compression";
    case Op::decompress: return "-d";
    case Op::list: return "-l";
    case Op::test: return "-t";
  }
  return "?";
}

struct Forwarded {
  const char* name;
  bool takes_value;
  bool compress, decompress, test;  // which operations take it
};

// Options passed through to the compress/decompress commands.
const Forwarded kForwarded[] = {
    {"dtype", true, true, false, false},     {"format", true, true, false, false},
    {"tensor", true, true, false, false},    {"codebook", true, true, false, false},
    {"tables", true, true, true, true},
    {"checksum", false, true, false, false}, {"no-checksum", false, true, false, false},
    {"chunk-log2", true, true, false, false}, {"mode", true, true, false, false},
    {"frame-size", true, true, false, false}, {"backend", true, true, true, true},
    {"threads", true, true, true, true},     {"sync", false, true, true, false},
    {"no-sync", false, true, true, false},   {"force", false, true, true, false},
    {"keep", false, true, true, false},      {"rm", false, true, true, false},
    {"max-size", true, false, true, true},
};

bool takes(const Forwarded& f, Op op) {
  return op == Op::compress ? f.compress : op == Op::decompress ? f.decompress : op == Op::test ? f.test : false;
}

// True when compress would find no dtype for this input: raw (by --format or
// name) with no dtype in the name. Such input is read as bf16.
bool raw_without_dtype(const Args& a, const std::string& file) {
  if (a.has("dtype")) return false;
  InputFormat fmt = InputFormat::raw;
  if (const std::string* f = a.value("format")) {
    if (!parse_format(*f, &fmt)) return false;  // compress reports it
  } else if (file != "-") {
    fmt = format_from_extension(file);
  }
  if (fmt != InputFormat::raw) return false;
  splitzip::Dtype d{};
  return file == "-" || !dtype_from_extension(file, &d);
}

bool has_sz_suffix(const std::string& name) { return name.size() > 3 && name.compare(name.size() - 3, 3, ".sz") == 0; }

// -r: the regular files below dir, sorted, symlinks not followed; for
// compression those not named *.sz, else only those. False (and a message)
// when the walk fails.
bool expand_dir(const std::string& dir, bool compress, int level, std::vector<std::string>* out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> found;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status(ec);
    if (ec) break;
    if (!fs::is_regular_file(st)) continue;
    const std::string p = it->path().string();
    if (has_sz_suffix(p) != compress) {
      found.push_back(p);
    } else if (level >= 3) {
      std::fprintf(stderr, "splitzip: %s: %s -- skipped\n", p.c_str(),
                   compress ? "already has the .sz suffix" : "has no .sz suffix");
    }
  }
  if (ec) {
    std::fprintf(stderr, "splitzip: %s: cannot read the directory: %s\n", dir.c_str(), ec.message().c_str());
    return false;
  }
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
  return true;
}

// Runs one command on one file; CliError and out-of-memory become the exit code.
int run_command(int (*cmd)(int, char**), std::vector<std::string> words, const std::string& file) {
  std::vector<char*> av;
  for (std::string& w : words) av.push_back(w.data());
  av.push_back(nullptr);
  try {
    std::fflush(stdout);
    const int rc = cmd(static_cast<int>(words.size()), av.data());
    std::fflush(stdout);
    return rc;
  } catch (const CliError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "splitzip: %s\n", e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "splitzip: %s: out of memory\n", file.c_str());
    return kExitInternal;
  }
}

}  // namespace

int zstd_mode(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  add_specs(specs, coding_option_specs());
  add_specs(specs, output_option_specs());
  add_specs(specs, {{"compress", 'z', false},
                    {"decompress", 'd', false},
                    {"list", 'l', false},
                    {"test", 't', false},
                    {"quiet", 'q', false},
                    {"verbose", 'v', false},
                    {"recursive", 'r', false},
                    {"max-size", 0, true},
                    {"version", 'V', false},
                    {"help", 'h', false}});
  const Args a("", specs, argc, argv, 1);
  if (a.has("help")) {
    std::fputs(kTopUsage, stdout);
    return kExitOk;
  }
  if (a.has("version")) return print_version();

  const int ops = a.has("decompress") + a.has("list") + a.has("test") + a.has("compress");
  if (ops > 1 && !(ops == 2 && a.has("decompress") && a.has("test")))  // -dt is -t, as in zstd
    fail(kExitUsage, "choose one of -z, -d, -l and -t (see --help)");
  const Op op = a.has("test") ? Op::test : a.has("list") ? Op::list : a.has("decompress") ? Op::decompress : Op::compress;
  if (a.has("quiet") && a.has("verbose")) fail(kExitUsage, "-q and -v conflict");
  const int level = a.has("quiet") ? 1 : a.has("verbose") ? 3 : 2;  // zstd's display levels
  set_progress_quiet(level < 2);

  for (const Forwarded& f : kForwarded)
    if (a.has(f.name) && !takes(f, op)) fail(kExitUsage, std::string("--") + f.name + " does not apply to " + op_name(op));
  if (a.has(kLevelOption) && op != Op::compress)
    fail(kExitUsage, "'" + a.values(kLevelOption)[0] + "' is a compression level: it does not apply to " + op_name(op));
  if (op == Op::compress) (void)coding_mode_option(a, "");  // a bad level or conflict: once, before any file
  // Conflicts once here, not once per file.
  const char* const pairs[][2] = {{"keep", "rm"}, {"checksum", "no-checksum"}, {"sync", "no-sync"}};
  for (const auto& p : pairs)
    if (a.has(p[0]) && a.has(p[1])) fail(kExitUsage, std::string("--") + p[0] + " and --" + p[1] + " conflict");
  if (a.has("stdout") && a.value("output") && *a.value("output") != "-") fail(kExitUsage, "-c and -o conflict");
  const bool to_stdout = a.has("stdout") || (a.value("output") && *a.value("output") == "-");
  if ((op == Op::list || op == Op::test) && (a.has("output") || a.has("stdout")))
    fail(kExitUsage, std::string(op_name(op)) + " writes no output: -o and -c do not apply");

  std::vector<std::string> files;
  int first_failure = kExitOk;
  size_t failed = 0, unreadable_dirs = 0;
  if (a.has("recursive") && !a.positional().empty()) {
    std::error_code ec;
    for (const std::string& f : a.positional()) {
      if (f != "-" && std::filesystem::is_directory(f, ec)) {
        if (!expand_dir(f, op == Op::compress, level, &files)) {
          ++failed;
          ++unreadable_dirs;
          if (first_failure == kExitOk) first_failure = kExitIo;
        }
      } else {
        files.push_back(f);
      }
    }
    if (files.empty() && failed == 0 && level >= 2)
      std::fprintf(stderr, "splitzip: -r found no file to %s\n", op == Op::compress ? "compress" : "read");
    if (files.empty()) return first_failure;
  } else {
    files = a.positional();
  }
  if (files.empty()) {
    if (isatty(0) == 1)
      fail(kExitUsage, "stdin is a terminal: name a FILE, or pipe data in (see --help)");
    files.push_back("-");
  }
  if (a.has("output") && files.size() > 1) fail(kExitUsage, "-o takes one input; for several use -c or no -o");

  for (const std::string& file : files) {
    const std::string what = file == "-" ? "stdin" : file;
    int rc = kExitOk;
    if (op == Op::list) {
      rc = run_command(cmd_inspect, {"splitzip", "inspect", "--", file}, file);
    } else {
      const bool compress = op == Op::compress;
      std::vector<std::string> w{"splitzip", compress ? "compress" : "decompress"};
      for (const Forwarded& f : kForwarded) {
        if (!a.has(f.name)) continue;
        if (f.takes_value) w.push_back(std::string("--") + f.name + "=" + *a.value(f.name));
        else w.push_back(std::string("--") + f.name);
      }
      for (const std::string& l : a.values(kLevelOption)) w.push_back(l);  // compress maps them to a mode
      if (compress && raw_without_dtype(a, file)) {
        // Coding is lossless for any bytes; a wrong dtype only lowers the ratio.
        w.push_back("--dtype=bf16");
        if (level >= 3)
          std::fprintf(stderr,
                       "splitzip: %s: raw input with no dtype given or in its name: read as bf16 (lossless for any "
                       "bytes; --dtype sets it)\n",
                       what.c_str());
      }
      if (op == Op::test) {
        w.push_back("--output=/dev/null");  // decoding checks every frame and checksum; nothing is kept
      } else if (a.has("stdout")) {
        w.push_back("--stdout");
      } else if (a.has("output")) {
        w.push_back("--output=" + *a.value("output"));
      }
      // A file output gets its one-line summary at the default level, as in
      // zstd; stdout output only with -v.
      const bool file_out = op != Op::test && !to_stdout && file != "-" ;
      if (level >= 3 || (level == 2 && (file_out || (file == "-" && a.has("output") && !to_stdout))))
        w.push_back("--verbose");
      w.push_back("--");
      w.push_back(file);
      rc = run_command(compress ? cmd_compress : cmd_decompress, std::move(w), file);
      if (rc == kExitOk && op == Op::test && level >= 2)
        std::fprintf(stderr, "splitzip: %s: OK (every frame decodes and matches its checksums)\n", what.c_str());
    }
    if (rc != kExitOk) {
      ++failed;
      if (first_failure == kExitOk) first_failure = rc;
    }
  }
  const size_t total = files.size() + unreadable_dirs;
  if (failed && total > 1 && level >= 2) std::fprintf(stderr, "splitzip: %zu of %zu files failed\n", failed, total);
  return first_failure;
}

}  // namespace szcli
