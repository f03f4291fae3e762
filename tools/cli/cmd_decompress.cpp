// SPDX-License-Identifier: Apache-2.0
// splitzip decompress: a stream of frames -> the concatenation of their data.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/frames.h"
#include "tools/cli/progress.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip decompress [options] IN.sz\n"
    "  Decodes every frame of IN.sz ('-' = stdin) and writes the raw elements.\n"
    "  --backend B        force a backend (default: $SPLITZIP_BACKEND, else dispatch)\n"
    "  --max-size SIZE    refuse streams that decode to more than SIZE bytes\n"
    "                     (default 64G; 0 = no limit). Checked from the headers\n"
    "                     before anything is allocated or written.\n"
    "  --threads N        worker threads (default: backend's choice)\n"
    "  -o, --output OUT   output file ('-' = stdout); default IN without .sz,\n"
    "                     else IN.out; stdout for stdin\n"
    "  -f, --force        overwrite OUT if it exists\n"
    "  -k, --keep         keep IN (the default)\n"
    "  --rm               remove IN after OUT is safely written\n"
    "  -v, --verbose      print frames, sizes and the backend to stderr\n";

constexpr uint64_t kDefaultMaxSize = uint64_t{64} << 30;

std::string default_output(const std::string& in) {
  if (in == "-") return "-";
  if (in.size() > 3 && in.compare(in.size() - 3, 3, ".sz") == 0) return in.substr(0, in.size() - 3);
  return in + ".out";
}

}  // namespace

int cmd_decompress(int argc, char** argv) {
  Args a("decompress",
         {{"backend", 0, true},
          {"max-size", 0, true},
          {"threads", 0, true},
          {"output", 'o', true},
          {"force", 'f', false},
          {"keep", 'k', false},
          {"rm", 0, false},
          {"verbose", 'v', false},
          {"help", 'h', false}},
         argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  if (a.positional().size() != 1) fail(kExitUsage, "decompress: expected one input file (see --help)");
  if (a.has("keep") && a.has("rm")) fail(kExitUsage, "decompress: -k/--keep and --rm conflict");
  const std::string in_path = a.positional()[0];
  const uint64_t max_size = a.size("max-size", kDefaultMaxSize);
  const std::string out_path = a.value("output") ? *a.value("output") : default_output(in_path);
  const bool force = a.has("force");
  if (in_path != "-" && out_path != "-" && same_file(in_path, out_path))
    fail(kExitUsage, "decompress: output " + out_path + " is the input file");

  const InputBytes in = InputBytes::open(in_path);
  const std::string what = in_path == "-" ? "stdin" : in_path;
  // Every header is checked, and the total bounded, before any allocation
  // or output: a bomb or a bad later frame leaves nothing behind. An empty
  // stream has no frames and decodes to an empty output.
  const StreamFrames s = read_stream(in.data(), in.size(), what);
  if (max_size && s.decoded_size > max_size)
    fail(kExitLimit, "decompress: " + what + " decodes to " + std::to_string(s.decoded_size) +
                         " bytes, over the --max-size limit of " + std::to_string(max_size) + ": " +
                         status_text(splitzip::Status::limit_exceeded));

  splitzip::DecompressOptions opts;
  opts.backend = a.value("backend") ? a.value("backend")->c_str() : nullptr;
  opts.threads = threads_option(a);
  opts.max_output_bytes = max_size;
  opts.verify_checksum = true;

  uint64_t largest = 1;
  for (const splitzip::FrameView& f : s.frames) largest = std::max(largest, f.info.decoded_size);
  std::unique_ptr<uint8_t[]> buf;
  try {
    buf.reset(new uint8_t[largest]);
  } catch (const std::bad_alloc&) {
    fail(kExitInternal, "decompress: cannot allocate " + std::to_string(largest) + " bytes for a frame");
  }

  AtomicOutput out(out_path, force);
  Progress progress("decompress", s.decoded_size);
  std::string backends;
  uint64_t done = 0;
  for (size_t i = 0; i < s.frames.size(); ++i) {
    const splitzip::FrameView& f = s.frames[i];
    const splitzip::Result r = splitzip::decompress(f.data, f.size, buf.get(), f.info.decoded_size, opts);
    check_decode(r, f, done, "decompress: " + what + ": " + frame_where(i, f.offset));
    if (r.size != f.info.decoded_size)
      fail(kExitInternal, "decompress: frame " + std::to_string(i) + " decoded to an unexpected size");
    if (r.backend && backends.find(r.backend) == std::string::npos)
      backends += std::string(backends.empty() ? "" : ",") + r.backend;
    out.write(buf.get(), r.size);
    done += r.size;
    progress.update(done);
  }
  progress.finish();
  out.commit();

  if (a.has("rm") && in_path != "-" && is_regular_file(in_path)) {
    if (unlink(in_path.c_str()) != 0)
      fail(kExitIo, "decompress: " + in_path + ": output written but cannot remove input");
  }
  if (a.has("verbose")) {
    std::fprintf(stderr, "splitzip: %s -> %s: %zu frame(s), %llu -> %llu bytes, backend %s\n", what.c_str(),
                 out_path.c_str(), s.frames.size(), static_cast<unsigned long long>(in.size()),
                 static_cast<unsigned long long>(s.decoded_size), backends.empty() ? "?" : backends.c_str());
  }
  return kExitOk;
}

}  // namespace szcli
