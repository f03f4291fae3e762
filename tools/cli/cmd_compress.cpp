// SPDX-License-Identifier: Apache-2.0
// splitzip compress: one input tensor -> a stream of frames (one frame per
// --frame-size bytes, a single frame for inputs up to 1 GiB).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/progress.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip compress [options] IN\n"
    "  Compresses IN (raw, .npy or .safetensors; '-' = stdin) into frames.\n"
    "  --dtype D          bf16 | fp16 | fp32 | fp8_e5m2 (raw input; else from the\n"
    "                     extension .bf16 .f16 .f32 .e5m2 or the container header)\n"
    "  --format F         raw | npy | safetensors (default: by extension; stdin: raw)\n"
    "  --tensor NAME      tensor to take from a .safetensors file\n"
    "  --codebook F       use a codebook from `splitzip calibrate` (default: the\n"
    "                     top-16 exponents of the input itself)\n"
    "  --backend B        force a backend (default: $SPLITZIP_BACKEND, else dispatch)\n"
    "  --checksum         store XXH3 checksums of the input, one per 64 KiB block (default)\n"
    "  --no-checksum      do not store them\n"
    "  --chunk-log2 N     chunk size 2^N elements, 6..15 (default 10)\n"
    "  --mode M           fast (4-bit exponent codes, default) | capacity (per-block\n"
    "                     Huffman exponents: smaller, slower); decoders need no flag\n"
    "  --frame-size SIZE  split inputs larger than SIZE bytes into several frames\n"
    "                     (default 1G)\n"
    "  --threads N        worker threads (default: backend's choice)\n"
    "  -o, --output OUT   output file ('-' = stdout); default IN.sz, stdout for stdin\n"
    "  -f, --force        overwrite OUT if it exists\n"
    "  -k, --keep         keep IN (the default; IN is never removed without --rm)\n"
    "  --rm               remove IN after OUT is safely written\n"
    "  -v, --verbose      print the backend that ran, sizes and ratio to stderr\n";

std::string default_output(const std::string& in, InputFormat fmt, const TensorView& v) {
  if (in == "-") return "-";
  if (fmt == InputFormat::raw) return in + ".sz";
  // Decompression yields raw elements, so name the output for what it will
  // hold: x.npy -> x.bf16.sz -> x.bf16, never a raw file called x.npy.
  const std::string ext = fmt == InputFormat::npy ? ".npy" : ".safetensors";
  std::string stem = in.substr(0, in.size() - ext.size());
  if (fmt == InputFormat::safetensors) {
    std::string t = v.name;
    for (char& c : t)
      if (c == '/' || c == '\\' || c == ' ' || c == ':') c = '_';
    stem += "." + t;
  }
  return stem + dtype_extension(v.dtype) + ".sz";
}

}  // namespace

int cmd_compress(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  specs.insert(specs.end(), {{"codebook", 0, true},
                             {"backend", 0, true},
                             {"checksum", 0, false},
                             {"no-checksum", 0, false},
                             {"chunk-log2", 0, true},
                             {"mode", 0, true},
                             {"frame-size", 0, true},
                             {"threads", 0, true},
                             {"output", 'o', true},
                             {"force", 'f', false},
                             {"keep", 'k', false},
                             {"rm", 0, false},
                             {"verbose", 'v', false},
                             {"help", 'h', false}});
  Args a("compress", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  if (a.positional().size() != 1) fail(kExitUsage, "compress: expected one input file (see --help)");
  if (a.has("checksum") && a.has("no-checksum")) fail(kExitUsage, "compress: --checksum and --no-checksum conflict");
  if (a.has("keep") && a.has("rm")) fail(kExitUsage, "compress: -k/--keep and --rm conflict");
  const std::string in_path = a.positional()[0];
  const uint64_t chunk_log2 = a.u64("chunk-log2", splitzip::kDefaultChunkLog2);
  if (chunk_log2 < splitzip::kMinChunkLog2 || chunk_log2 > splitzip::kMaxChunkLog2)
    fail(kExitUsage, "compress: --chunk-log2 must be in 6..15");
  const uint64_t frame_size = a.size("frame-size", uint64_t{1} << 30);
  const InputOptions iopt = input_options(a);

  // Raw stdin is streamed frame by frame (memory stays at one frame);
  // files and containers are mapped and checked before any output exists.
  const bool streaming = in_path == "-" && (iopt.format.empty() || iopt.format == "raw");
  if (streaming && !iopt.hint.given) fail(kExitUsage, "compress: reading raw data from stdin needs --dtype");
  TensorInput input;
  TensorView v;
  if (streaming) {
    v.dtype = iopt.hint.dtype;
    v.what = std::string("raw ") + splitzip::dtype_name(v.dtype) + " from stdin";
  } else {
    input = TensorInput::load(in_path, iopt);
    v = input.view();
  }
  splitzip::Codebook cb;
  const bool have_cb = a.value("codebook") != nullptr;
  if (have_cb) {
    cb = load_codebook_file(*a.value("codebook"));
    if (cb.dtype != v.dtype)
      fail(kExitUsage, "compress: codebook " + *a.value("codebook") + " is for " + splitzip::dtype_name(cb.dtype) +
                           " but the input is " + splitzip::dtype_name(v.dtype));
  }
  const uint32_t w = splitzip::dtype_bytes(v.dtype);
  if (frame_size < w) fail(kExitUsage, "compress: --frame-size must hold at least one element");
  const uint64_t frame_elems = std::min<uint64_t>(frame_size / w, splitzip::kMaxElems);

  std::string out_path = a.value("output") ? *a.value("output") : default_output(in_path, input.format(), v);
  const bool force = a.has("force");
  if (out_path == "-" && isatty(1) && !force)
    fail(kExitUsage, "compress: refusing to write compressed data to a terminal (redirect, use -o, or -f)");
  if (in_path != "-" && out_path != "-" && same_file(in_path, out_path))
    fail(kExitUsage, "compress: output " + out_path + " is the input file");

  splitzip::CompressOptions opts;
  opts.codebook = have_cb ? &cb : nullptr;
  opts.chunk_log2 = static_cast<uint32_t>(chunk_log2);
  opts.checksum = !a.has("no-checksum");
  opts.backend = a.value("backend") ? a.value("backend")->c_str() : nullptr;
  opts.threads = threads_option(a);
  if (const std::string* m = a.value("mode")) {
    if (*m == "capacity") opts.mode = splitzip::Mode::capacity;
    else if (*m != "fast") fail(kExitUsage, "compress: --mode must be fast or capacity");
  }

  AtomicOutput out(out_path, force);
  std::vector<uint8_t> piece;  // streaming: the current frame's input
  std::vector<uint8_t> dst;
  Progress progress("compress", streaming ? 0 : v.bytes);
  uint64_t done = 0, escapes = 0, frames = 0;
  std::string backends;
  while (true) {
    const uint8_t* src = nullptr;
    uint64_t n = 0;
    if (streaming) {
      // Grow in steps so a small stdin never allocates a whole frame's worth.
      const uint64_t want = frame_elems * w;
      piece.clear();
      while (piece.size() < want) {
        const uint64_t old = piece.size();
        const uint64_t step = std::min<uint64_t>(want - old, std::max<uint64_t>(old, uint64_t{1} << 20));
        piece.resize(old + step);
        const uint64_t got = read_full(0, piece.data() + old, step, "stdin");
        piece.resize(old + got);
        if (got < step) break;
      }
      if (piece.size() % w != 0)
        fail(kExitInvalid, "compress: stdin: size " + std::to_string(done * w + piece.size()) +
                               " bytes is not a multiple of " + std::to_string(w) + " (" +
                               splitzip::dtype_name(v.dtype) + " elements)");
      if (piece.empty() && frames > 0) break;
      src = piece.data();
      n = piece.size() / w;
    } else {
      if (done == v.n_elems && frames > 0) break;
      n = std::min(frame_elems, v.n_elems - done);
      src = v.data + done * w;
    }
    const uint64_t cap = splitzip::compress_bound(v.dtype, n);
    if (dst.size() < cap) dst.resize(cap);
    const splitzip::Result r = splitzip::compress(v.dtype, src, n, dst.data(), cap, opts);
    check_status(r.status, "compress: " + in_path + (frames ? " (frame " + std::to_string(frames) + ")" : ""));
    splitzip::FrameInfo fi;
    check_status(splitzip::frame_info(dst.data(), r.size, &fi), "compress: produced frame fails its own check");
    escapes += fi.escape_count;
    if (r.backend && backends.find(r.backend) == std::string::npos)
      backends += std::string(backends.empty() ? "" : ",") + r.backend;
    out.write(dst.data(), r.size);
    done += n;
    ++frames;
    progress.update(done * w);
    if (streaming && n < frame_elems) break;  // short read: end of input
  }
  progress.finish();
  out.commit();
  v.n_elems = done;
  v.bytes = done * w;

  if (a.has("rm") && in_path != "-" && is_regular_file(in_path)) {
    if (unlink(in_path.c_str()) != 0) fail(kExitIo, "compress: " + in_path + ": output written but cannot remove input");
  }
  if (a.has("verbose")) {
    const double ratio = out.written() ? static_cast<double>(v.bytes) / static_cast<double>(out.written()) : 0.0;
    const double e = v.n_elems ? static_cast<double>(escapes) / static_cast<double>(v.n_elems) : 0.0;
    std::fprintf(stderr,
                 "splitzip: %s -> %s: %s, %llu elements, %llu frame(s), backend %s, %llu -> %llu bytes, "
                 "ratio %.4f, escapes %llu (%.4f%%), checksum %s\n",
                 in_path.c_str(), out_path.c_str(), v.what.c_str(), static_cast<unsigned long long>(v.n_elems),
                 static_cast<unsigned long long>(frames), backends.empty() ? "?" : backends.c_str(),
                 static_cast<unsigned long long>(v.bytes), static_cast<unsigned long long>(out.written()), ratio,
                 static_cast<unsigned long long>(escapes), 100.0 * e, opts.checksum ? "xxh3 blocks" : "off");
  }
  return kExitOk;
}

}  // namespace szcli
