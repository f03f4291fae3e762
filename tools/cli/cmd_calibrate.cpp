// SPDX-License-Identifier: Apache-2.0
// splitzip calibrate: one codebook (FORMAT.md section 10) from the pooled
// exponent histogram of many files, or with --mode capacity one table set
// (FORMAT.md 4.9, 13) from them.
#include <cstdio>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip calibrate [options] -o OUT FILE...\n"
    "  Builds the top-16 exponent codebook of all FILEs together and saves it\n"
    "  as a 32-byte .szcb file for `compress --codebook`; with --mode capacity,\n"
    "  a table set (.szct) for `compress/decompress --tables` instead.\n"
    "  Calibrate on other KV of the same model than the one you will compress.\n"
    "  --dtype/--format/--tensor   how to read each FILE (as for compress)\n"
    "  --mode M                    fast (a codebook, default) | capacity (a table set)\n"
    "  --table-count N             capacity: tables in the set, a power of 2 in\n"
    "                              1..32 (default: the format's default)\n"
    "  -o, --output OUT            codebook or table set file to write ('-' = stdout)\n"
    "  -f, --force                 overwrite OUT if it exists\n"
    "  -q, --quiet                 print errors only (not the codebook or set line)\n";

// --mode capacity: every FILE stays mapped until the set is built from all of them.
int calibrate_tables(const Args& a, const InputOptions& iopt) {
  uint64_t count = a.u64("table-count", 0);
  if (a.has("table-count") && (count == 0 || count > 32 || (count & (count - 1)) != 0))
    fail(kExitUsage, "calibrate: --table-count must be a power of 2 in 1..32");
  std::vector<TensorInput> inputs;
  inputs.reserve(a.positional().size());
  std::vector<const void*> bufs;
  std::vector<uint64_t> counts;
  uint64_t total = 0;
  for (const std::string& path : a.positional()) {
    inputs.push_back(TensorInput::load(path, iopt));
    const TensorView& v = inputs.back().view();
    if (v.dtype != inputs.front().view().dtype)
      fail(kExitUsage, "calibrate: " + path + " is " + splitzip::dtype_name(v.dtype) + " but earlier inputs are " +
                           splitzip::dtype_name(inputs.front().view().dtype) + "; one table set serves one dtype");
    bufs.push_back(v.data);
    counts.push_back(v.n_elems);
    total += v.n_elems;
  }
  if (total == 0) fail(kExitInvalid, "calibrate: the inputs hold no elements");
  const splitzip::Dtype dtype = inputs.front().view().dtype;
  splitzip::TableSet set;
  check_status(splitzip::calibrate_tables(dtype, bufs.data(), counts.data(), bufs.size(), &set,
                                          static_cast<uint32_t>(count)),
               std::string("calibrate: table set for ") + splitzip::dtype_name(dtype));
  std::vector<uint8_t> bytes(set.serialized_size());
  uint64_t written = 0;
  check_status(set.to_bytes(bytes.data(), bytes.size(), &written), "calibrate: table set");
  AtomicOutput out(*a.value("output"), a.has("force"));
  out.write(bytes.data(), written);
  out.commit();
  if (!a.has("quiet"))
    std::fprintf(stderr, "splitzip: table set %s (%s, %u tables, %llu bytes) from %llu elements in %zu file(s)\n",
                 tables_id_text(set.id()).c_str(), splitzip::dtype_name(dtype), set.table_count(),
                 static_cast<unsigned long long>(written), static_cast<unsigned long long>(total),
                 a.positional().size());
  return kExitOk;
}

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  specs.insert(specs.end(),
               {{"output", 'o', true}, {"force", 'f', false}, {"quiet", 'q', false}, {"help", 'h', false},
                {"mode", 0, true}, {"table-count", 0, true}});
  Args a("calibrate", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  const std::string mode = a.value("mode") ? *a.value("mode") : "fast";
  if (mode != "fast" && mode != "capacity") fail(kExitUsage, "calibrate: --mode must be fast or capacity");
  if (!a.value("output"))
    fail(kExitUsage, mode == "capacity" ? "calibrate: -o TABLES is required" : "calibrate: -o CODEBOOK is required");
  if (a.positional().empty()) fail(kExitUsage, "calibrate: expected at least one input file");
  const InputOptions iopt = input_options(a);
  if (mode == "capacity") return calibrate_tables(a, iopt);
  if (a.has("table-count")) fail(kExitUsage, "calibrate: --table-count applies to --mode capacity only");

  bool have_dtype = false;
  splitzip::Dtype dtype = splitzip::Dtype::bf16;
  splitzip::Histogram hist(dtype);
  for (const std::string& path : a.positional()) {
    const TensorInput in = TensorInput::load(path, iopt);
    const TensorView& v = in.view();
    if (!have_dtype) {
      have_dtype = true;
      dtype = v.dtype;
      hist = splitzip::Histogram(dtype);
    } else if (v.dtype != dtype) {
      fail(kExitUsage, "calibrate: " + path + " is " + splitzip::dtype_name(v.dtype) + " but earlier inputs are " +
                           splitzip::dtype_name(dtype) + "; one codebook serves one dtype");
    }
    hist.add(v.data, v.n_elems);
  }
  if (hist.total() == 0) fail(kExitInvalid, "calibrate: the inputs hold no elements");

  const splitzip::Codebook cb = hist.codebook();
  uint8_t bytes[splitzip::kCodebookFileSize];
  check_status(splitzip::codebook_serialize(cb, bytes), "calibrate: codebook");
  AtomicOutput out(*a.value("output"), a.has("force"));
  out.write(bytes, sizeof bytes);
  out.commit();

  uint64_t covered = 0;
  for (unsigned i = 0; i < cb.count; ++i) covered += hist.count(cb.entries[i]);
  const double e = 1.0 - static_cast<double>(covered) / static_cast<double>(hist.total());
  if (!a.has("quiet"))
    std::fprintf(stderr, "splitzip: codebook %s from %llu elements in %zu file(s): escape rate %.4f%% on them\n",
                 codebook_text(cb).c_str(), static_cast<unsigned long long>(hist.total()), a.positional().size(),
                 100.0 * e);
  return kExitOk;
}

}  // namespace szcli
