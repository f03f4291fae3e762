// SPDX-License-Identifier: Apache-2.0
// splitzip calibrate: one codebook (FORMAT.md section 10) from the pooled
// exponent histogram of many files.
#include <cstdio>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip calibrate [options] -o CODEBOOK FILE...\n"
    "  Builds the top-16 exponent codebook of all FILEs together and saves it\n"
    "  as a 32-byte .szcb file for `compress --codebook`.\n"
    "  --dtype/--format/--tensor   how to read each FILE (as for compress)\n"
    "  -o, --output CODEBOOK       codebook file to write ('-' = stdout)\n"
    "  -f, --force                 overwrite CODEBOOK if it exists\n"
    "  -q, --quiet                 print errors only (not the codebook)\n";

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  specs.insert(specs.end(),
               {{"output", 'o', true}, {"force", 'f', false}, {"quiet", 'q', false}, {"help", 'h', false}});
  Args a("calibrate", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  if (!a.value("output")) fail(kExitUsage, "calibrate: -o CODEBOOK is required");
  if (a.positional().empty()) fail(kExitUsage, "calibrate: expected at least one input file");
  const InputOptions iopt = input_options(a);

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
