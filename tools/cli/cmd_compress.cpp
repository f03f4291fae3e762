// SPDX-License-Identifier: Apache-2.0
// splitzip compress: one input tensor -> a stream of frames of a fixed
// element count (default kDefaultFrameElems), streamed through a bounded
// pipeline (tools/cli/pipeline.h): read() into reused buffers, N coders,
// ordered write(). Memory stays flat for any input size.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/container_roundtrip.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/frames.h"
#include "tools/cli/pipeline.h"
#include "tools/cli/progress.h"

namespace szcli {

namespace {

// Elements per frame for dtype d: the default, or --frame-size bytes.
uint64_t frame_elems_for(splitzip::Dtype d, uint64_t frame_size) {
  if (frame_size == 0) return kDefaultFrameElems;
  const uint64_t n = frame_size / splitzip::dtype_bytes(d);
  if (n == 0) fail(kExitUsage, "compress: --frame-size must hold at least one element");
  return std::min<uint64_t>(n, splitzip::kMaxElems);
}

const char kUsage[] =
    "usage: splitzip compress [options] IN\n"
    "  Compresses IN (raw, .npy or .safetensors; '-' = stdin) into frames.\n"
    "  --dtype D          bf16 | fp16 | fp32 | fp8_e5m2 (raw input; else from the\n"
    "                     extension .bf16 .f16 .f32 .e5m2 or the container header)\n"
    "  --format F         raw | npy | safetensors (default: by extension; stdin: raw)\n"
    "  --tensor NAME      compress only this tensor of a .safetensors file (it\n"
    "                     decompresses to raw elements); without it a .npy or\n"
    "                     .safetensors file decompresses to the identical file\n"
    "  --codebook F       use a codebook from `splitzip calibrate` (default: the\n"
    "                     top-16 exponents of the input itself)\n"
    "  --backend B        force a backend (default: $SPLITZIP_BACKEND, else dispatch)\n"
    "  --checksum         store XXH3 checksums of the input, one per 64 KiB block (default)\n"
    "  --no-checksum      do not store them: corrupt frames then decode to wrong\n"
    "                     data with exit 0 (nothing can detect the damage)\n"
    "  --chunk-log2 N     chunk size 2^N elements, 6..15 (default 10)\n"
    "  --mode M           fast (4-bit exponent codes, default) | capacity (per-block\n"
    "                     Huffman exponents: smaller, slower); decoders need no flag\n"
    "  --tables F         code with a table set from `splitzip calibrate --mode\n"
    "                     capacity` (implies --mode capacity): frames name the set\n"
    "                     instead of carrying tables; decompress needs --tables F\n"
    "  -1..-22, --fast[=N], --ultra\n"
    "                     zstd's levels: -1..-3 and --fast are --mode fast, -4..-22\n"
    "                     --mode capacity; --ultra changes nothing\n"
    "  --frame-size SIZE  bytes of input per frame (default: 262144 elements,\n"
    "                     512 KiB of bf16); the output is the same for any -T\n"
    "  -T, --threads N    code N frames in parallel (default 1; 0 = all CPUs)\n"
    "  -o, --output OUT   output file ('-' = stdout); default IN.sz, stdout for stdin\n"
    "  -c, --stdout       write to stdout (same as -o -)\n"
    "  --sync, --no-sync  fsync OUT and its directory before the rename (default: --sync)\n"
    "  -f, --force        overwrite OUT if it exists\n"
    "  -k, --keep         keep IN (the default; IN is never removed without --rm)\n"
    "  --rm               remove IN after OUT is safely written\n"
    "  -q, --quiet        print errors only (no progress line)\n"
    "  -v, --verbose      print the backend that ran, sizes and ratio to stderr\n";

std::string default_output(const std::string& in, InputFormat fmt, const TensorView& v) {
  if (in == "-") return "-";
  // Raw input, a .npy file and a whole .safetensors file decompress to the
  // same file: x.npy -> x.npy.sz -> x.npy.
  if (fmt == InputFormat::raw || fmt == InputFormat::npy || v.whole_file) return in + ".sz";
  // One tensor (--tensor) decompresses to raw elements, so name the output
  // for what it will hold: x.safetensors -> x.NAME.bf16.sz -> x.NAME.bf16.
  const std::string ext = ".safetensors";
  std::string stem = in.substr(0, in.size() - ext.size());
  {
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
  add_specs(specs, coding_option_specs());
  add_specs(specs, output_option_specs());
  add_specs(specs, {{"quiet", 'q', false}, {"verbose", 'v', false}, {"help", 'h', false}});
  Args a("compress", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  quiet_option(a, "compress");
  if (a.positional().size() != 1) fail(kExitUsage, "compress: expected one input file (see --help)");
  if (a.has("checksum") && a.has("no-checksum")) fail(kExitUsage, "compress: --checksum and --no-checksum conflict");
  if (a.has("sync") && a.has("no-sync")) fail(kExitUsage, "compress: --sync and --no-sync conflict");
  if (a.has("keep") && a.has("rm")) fail(kExitUsage, "compress: -k/--keep and --rm conflict");
  if (a.has("stdout") && a.value("output") && *a.value("output") != "-")
    fail(kExitUsage, "compress: -c/--stdout and -o conflict");
  const std::string in_path = a.positional()[0];
  const uint64_t chunk_log2 = a.u64("chunk-log2", splitzip::kDefaultChunkLog2);
  if (chunk_log2 < splitzip::kMinChunkLog2 || chunk_log2 > splitzip::kMaxChunkLog2)
    fail(kExitUsage, "compress: --chunk-log2 must be in 6..15");
  InputOptions iopt = input_options(a);
  iopt.whole_file = true;
  const uint32_t coders_wanted = coder_threads_option(a);

  InputFormat fmt = InputFormat::raw;
  if (iopt.format.empty()) {
    fmt = in_path == "-" ? InputFormat::raw : format_from_extension(in_path);
  } else if (!parse_format(iopt.format, &fmt)) {
    fail(kExitUsage, "unknown --format '" + iopt.format + "' (use raw, npy or safetensors)");
  }

  // Raw input (files, FIFOs, stdin) is read one frame at a time. Containers
  // are mapped and their headers checked before any output exists; then the
  // payload of a container file is read from the file like a raw file (the
  // mapping's payload pages are never touched), and only a container on
  // stdin or a FIFO is copied from memory.
  const bool raw = fmt == InputFormat::raw;
  std::unique_ptr<InputFd> fd_in;
  TensorInput container;
  TensorView v;
  if (raw) {
    if (!iopt.tensor.empty()) fail(kExitUsage, in_path + ": --tensor applies to .safetensors input only");
    if (iopt.hint.given) v.dtype = iopt.hint.dtype;
    else if (in_path == "-") fail(kExitUsage, "compress: reading raw data from stdin needs --dtype");
    else if (!dtype_from_extension(in_path, &v.dtype))
      fail(kExitUsage, in_path + ": cannot infer the dtype of a raw file from its name; pass --dtype "
                                 "(bf16, fp16, fp32, fp8_e5m2) or use a .bf16/.f16/.f32/.e5m2 name");
    fd_in.reset(new InputFd(in_path));
    v.what = std::string("raw ") + splitzip::dtype_name(v.dtype) + (in_path == "-" ? " from stdin" : "");
    const uint32_t w0 = splitzip::dtype_bytes(v.dtype);
    if (fd_in->regular() && fd_in->size() % w0 != 0)
      fail(kExitInvalid, fd_in->what() + ": size " + std::to_string(fd_in->size()) + " bytes is not a multiple of " +
                             std::to_string(w0) + " (" + splitzip::dtype_name(v.dtype) + " elements)");
    if (fd_in->regular()) {
      v.bytes = fd_in->size();
      v.n_elems = v.bytes / w0;
    }
  } else {
    container = TensorInput::load(in_path, iopt, false);
    v = container.view();
    uint64_t payload_off = 0;
    if (container.payload_in_file(&payload_off)) {
      fd_in.reset(new InputFd(in_path));
      if (fd_in->regular()) fd_in->restrict_to(payload_off, v.bytes);
      else fd_in.reset();
    }
  }
  const bool from_fd = fd_in != nullptr;
  splitzip::Codebook cb;
  const bool have_cb = a.value("codebook") != nullptr;
  if (have_cb) {
    cb = load_codebook_file(*a.value("codebook"));
    // A whole safetensors file uses it for the frames of its dtype.
    if (cb.dtype != v.dtype && !v.whole_file)
      fail(kExitUsage, "compress: codebook " + *a.value("codebook") + " is for " + splitzip::dtype_name(cb.dtype) +
                           " but the input is " + splitzip::dtype_name(v.dtype));
  }
  splitzip::TableSet tables;
  const bool have_tables = a.value("tables") != nullptr;
  if (have_tables) {
    tables = load_tables_file(*a.value("tables"));
    if (tables.dtype() != v.dtype && !v.whole_file)
      fail(kExitUsage, "compress: table set " + *a.value("tables") + " is for " + splitzip::dtype_name(tables.dtype()) +
                           " but the input is " + splitzip::dtype_name(v.dtype));
  }
  const uint32_t w = splitzip::dtype_bytes(v.dtype);
  uint64_t frame_size_opt = 0;
  if (a.has("frame-size")) {
    frame_size_opt = a.size("frame-size", 0);
    if (frame_size_opt == 0) fail(kExitUsage, "compress: --frame-size must hold at least one element");
  }
  const bool known = !from_fd || fd_in->regular();
  // A payload of known size is cut into frames up front (a whole
  // safetensors file: per tensor, each in its own dtype).
  std::vector<PlannedFrame> plan;
  uint64_t frame_bytes = frame_elems_for(v.dtype, frame_size_opt) * w;
  if (known) {
    plan = plan_frames(v, frame_elems_for, frame_size_opt);
    frame_bytes = 0;
    for (const PlannedFrame& p : plan) frame_bytes = std::max(frame_bytes, p.bytes);
  }
  // .npy and whole .safetensors files: the first frame records the file's
  // header, so decompress restores the identical file.
  splitzip::TensorDesc desc;
  const bool have_desc =
      known && !raw && container_descriptor(v, fmt, container.file_data() + v.header_off, plan[0], &desc,
                                               "compress: " + (in_path == "-" ? std::string("stdin") : in_path));

  std::string out_path =
      a.has("stdout") ? std::string("-")
                      : a.value("output") ? *a.value("output") : default_output(in_path, fmt, v);
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
  opts.mode = tables_mode_option(a, "compress", have_tables);
  opts.tables = have_tables ? &tables : nullptr;
  // Small frames (the default): N coders, one frame each, one thread per
  // frame (positional mode: N workers; streaming: 2N+2 slots). Big frames
  // (--frame-size over kBigFrameBytes): one frame at a time coded with N
  // library threads, 2 slots.
  const bool big = frame_bytes > kBigFrameBytes;
  const uint32_t coders = big ? 1 : coders_wanted;
  opts.threads = big ? static_cast<int>(coders_wanted) : 1;
  const uint32_t n_slots = big ? 2 : 2 * coders + 2;
  // Inputs smaller than one frame get buffers of their own size; big frames
  // get theirs when they are read, and give them back once written.
  const uint64_t in_cap = big ? 0 : known ? std::min<uint64_t>(frame_bytes, v.bytes) : frame_bytes;

  AtomicOutput out(out_path, force, !a.has("no-sync"), file_meta(in_path));
  Progress progress("compress", known ? v.bytes : 0);
  uint64_t done = 0, done_bytes = 0, escapes = 0, exp_bytes = 0, cap_elems = 0;
  std::string backends;
  const std::string what = from_fd ? fd_in->what() : in_path;

  // slot.in (in_size bytes) -> one frame in slot.out; on any coder thread.
  auto code = [&](PipelineSlot& s) {
    const splitzip::Dtype d = plan.empty() ? v.dtype : plan[s.index].dtype;
    const uint64_t n = s.in_size / splitzip::dtype_bytes(d);
    splitzip::CompressOptions o = opts;
    if (o.codebook && o.codebook->dtype != d) o.codebook = nullptr;
    // A whole safetensors file: the set codes the tensors of its dtype.
    if (o.tables && (o.tables->dtype() != d || o.mode != splitzip::Mode::capacity)) o.tables = nullptr;
    if (have_desc && s.index == 0) o.tensor = &desc;  // once, in the first frame
    const uint64_t cap = splitzip::compress_bound(d, n) + (o.tensor ? splitzip::tensor_desc_size(desc) : 0);
    s.out.reserve(cap);
    const splitzip::Result r = splitzip::compress(d, s.in.data(), n, s.out.data(), cap, o);
    check_status(r.status, "compress: " + in_path + (s.index ? " (frame " + std::to_string(s.index) + ")" : ""));
    splitzip::FrameInfo fi;
    check_status(splitzip::frame_info(s.out.data(), r.size, &fi), "compress: produced frame fails its own check");
    s.out_size = r.size;
    s.aux[0] = fi.escape_count;  // capacity frames: their exponent bytes
    s.aux[3] = is_capacity(fi) ? 1 : 0;
    s.aux[1] = n;
    s.aux[2] = s.in_size;
    s.backend = r.backend;
  };
  auto account = [&](const PipelineSlot& s) {
    if (s.aux[3]) {
      exp_bytes += s.aux[0];
      cap_elems += s.aux[1];
    } else {
      escapes += s.aux[0];
    }
    done += s.aux[1];
    done_bytes += s.aux[2];
    if (s.backend && backends.find(s.backend) == std::string::npos)
      backends += std::string(backends.empty() ? "" : ",") + s.backend;
    progress.update(done_bytes);
  };

  uint64_t frames = 0;
  if (known && out.positional() && !big) {
    // A regular file into a temp file: each of the N workers reads its
    // frame with pread, codes it and writes it with pwrite at its offset
    // (known once every earlier frame is coded), so reads, coding and
    // writes all run N-wide. The bytes are those of the streaming path.
    const uint64_t n_frames = plan.size();
    std::vector<PipelineSlot> bufs(coders);
    for (PipelineSlot& b : bufs) {
      b.in.reserve(in_cap);
      b.out.reserve(splitzip::compress_bound(splitzip::Dtype::fp8_e5m2, in_cap) +
                    (have_desc ? splitzip::tensor_desc_size(desc) : 0));
    }
    OrderedOffsets offsets;
    std::mutex mu;
    run_frames_parallel(
        coders,
        [&](uint32_t worker, uint64_t i) {
          if (i >= n_frames) return false;
          PipelineSlot& s = bufs[worker];
          s.index = i;
          const uint64_t off = plan[i].off;
          const uint64_t want = plan[i].bytes;
          uint64_t got = want;
          if (from_fd) got = fd_in->read_at(s.in.data(), want, off);
          else if (want) std::memcpy(s.in.data(), v.data + off, want);
          if (got != want) fail(kExitIo, "compress: " + what + ": the input shrank while it was read");
          s.in_size = want;
          code(s);
          out.write_at(s.out.data(), s.out_size, offsets.take(i, s.out_size));
          std::lock_guard<std::mutex> lk(mu);
          account(s);
          return true;
        },
        &offsets);
    out.set_written(offsets.total());
    frames = n_frames;
  } else {
    FramePipeline pipe(coders, n_slots);
    for (PipelineSlot& s : pipe.slots()) {
      s.in.reserve(in_cap);
      s.out.reserve(splitzip::compress_bound(splitzip::Dtype::fp8_e5m2, in_cap));
    }
    uint64_t read_total = 0;
    auto produce = [&](PipelineSlot& s) {
      uint64_t got = 0;
      if (from_fd) {
        // A known size bounds every read: a container's payload may be
        // followed by other data.
        const uint64_t want = known ? plan[s.index].bytes : frame_bytes;
        if (known) s.in.reserve(want);
        got = read_growing(*fd_in, s.in, want);
      } else {
        got = plan[s.index].bytes;
        s.in.reserve(got);
        if (got) std::memcpy(s.in.data(), v.data + read_total, got);
      }
      read_total += got;
      if (known && got != plan[s.index].bytes)
        fail(kExitIo, "compress: " + what + ": the input shrank while it was read");
      if (got % (known ? splitzip::dtype_bytes(plan[s.index].dtype) : w) != 0)
        fail(kExitInvalid, "compress: " + what + ": size " + std::to_string(read_total) +
                               " bytes is not a multiple of " + std::to_string(w) + " (" +
                               splitzip::dtype_name(v.dtype) + " elements)");
      s.in_size = got;
      if (got == 0) return s.index == 0 ? FramePipeline::Produced::last_frame : FramePipeline::Produced::none;
      if (known ? s.index + 1 == plan.size() : got < frame_bytes) return FramePipeline::Produced::last_frame;
      return FramePipeline::Produced::frame;
    };
    auto consume = [&](PipelineSlot& s) {
      out.write(s.out.data(), s.out_size);
      account(s);
      if (big) {  // give a big frame's memory back before the next one
        s.in.shrink_to(0);
        s.out.shrink_to(0);
      }
    };
    frames = pipe.run(produce, code, consume);
  }
  progress.finish();
  out.commit();
  v.n_elems = done;
  v.bytes = done_bytes;

  if (a.has("rm") && in_path != "-" && is_regular_file(in_path)) {
    if (unlink(in_path.c_str()) != 0) fail(kExitIo, "compress: " + in_path + ": output written but cannot remove input");
  }
  if (a.has("verbose")) {
    const double ratio = out.written() ? static_cast<double>(v.bytes) / static_cast<double>(out.written()) : 0.0;
    const uint64_t fast_elems = v.n_elems - cap_elems;
    const double e = fast_elems ? static_cast<double>(escapes) / static_cast<double>(fast_elems) : 0.0;
    // Capacity frames have no escapes: their coded exponent size instead.
    char coded[96];
    if (cap_elems == v.n_elems && v.n_elems != 0)
      std::snprintf(coded, sizeof coded, "exponents %.3f bits each", 8.0 * static_cast<double>(exp_bytes) /
                                                                       static_cast<double>(cap_elems));
    else
      std::snprintf(coded, sizeof coded, "escapes %llu (%.4f%%)", static_cast<unsigned long long>(escapes), 100.0 * e);
    std::fprintf(stderr,
                 "splitzip: %s -> %s: %s, %llu elements, %llu frame(s), %u thread(s), backend %s, %llu -> %llu "
                 "bytes, ratio %.4f, %s, checksum %s%s\n",
                 in_path.c_str(), out_path.c_str(), v.what.c_str(), static_cast<unsigned long long>(v.n_elems),
                 static_cast<unsigned long long>(frames), coders_wanted, backends.empty() ? "?" : backends.c_str(),
                 static_cast<unsigned long long>(v.bytes), static_cast<unsigned long long>(out.written()), ratio,
                 coded, opts.checksum ? "xxh3 blocks" : "off",
                 have_tables ? (", table set " + tables_id_text(tables.id())).c_str() : "");
  }
  return kExitOk;
}

}  // namespace szcli
