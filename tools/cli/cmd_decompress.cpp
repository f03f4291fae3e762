// SPDX-License-Identifier: Apache-2.0
// splitzip decompress: a stream of frames -> the concatenation of their data,
// streamed frame by frame through a bounded pipeline (tools/cli/pipeline.h):
// read one header, read exactly that frame into a reused buffer, decode on
// one of N coders, write in order.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <map>
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

const char kUsage[] =
    "usage: splitzip decompress [options] IN.sz\n"
    "  Decodes every frame of IN.sz ('-' = stdin) and writes the raw elements;\n"
    "  a stream made from a .npy or .safetensors file gives back that file.\n"
    "  --backend B        force a backend (default: $SPLITZIP_BACKEND, else dispatch)\n"
    "  --tables F         a table set file the frames name (made by `splitzip\n"
    "                     calibrate --mode capacity`); repeat for several sets\n"
    "  --max-size SIZE    refuse streams that decode to more than SIZE bytes\n"
    "                     (default 64G; 0 = no limit). Checked from the headers\n"
    "                     before anything is allocated or written.\n"
    "  -T, --threads N    decode N frames in parallel (default 1; 0 = all CPUs)\n"
    "  -o, --output OUT   output file ('-' = stdout); default IN without .sz,\n"
    "                     else IN.out; stdout for stdin\n"
    "  -c, --stdout       write to stdout (same as -o -)\n"
    "  --sync, --no-sync  fsync OUT and its directory before the rename (default: --sync)\n"
    "  -f, --force        overwrite OUT if it exists\n"
    "  -k, --keep         keep IN (the default)\n"
    "  --rm               remove IN after OUT is safely written\n"
    "  -q, --quiet        print errors only (no progress line)\n"
    "  -v, --verbose      print frames, sizes and the backend to stderr\n";

constexpr uint64_t kDefaultMaxSize = uint64_t{64} << 30;

std::string default_output(const std::string& in) {
  if (in == "-") return "-";
  if (in.size() > 3 && in.compare(in.size() - 3, 3, ".sz") == 0) return in.substr(0, in.size() - 3);
  return in + ".out";
}

// Checks the 64 header bytes of frame `index` at stream offset `offset`
// (rules 1-10) and, when the bytes left in the stream are known, that the
// frame fits in them (rule 11). Throws CliError naming the frame.
splitzip::FrameInfo check_header(const uint8_t* hdr, uint64_t got, bool avail_known, uint64_t avail,
                                 uint64_t index, uint64_t offset, const std::string& what,
                                 const std::vector<splitzip::TableSet>& sets) {
  std::string where = "decompress: " + what + ": " + frame_where(static_cast<size_t>(index), offset);
  if (got < splitzip::kHeaderSize) {
    if (index > 0) where += " (" + std::to_string(got) + " trailing bytes)";
    fail(exit_code_for(splitzip::Status::truncated), where + ": " + status_text(splitzip::Status::truncated));
  }
  splitzip::FrameInfo fi;
  splitzip::Status st = splitzip::frame_header_info(hdr, &fi);
  if (st == splitzip::Status::ok && avail_known && fi.frame_size > avail) st = splitzip::Status::truncated;
  if (st != splitzip::Status::ok) fail(exit_code_for(st), where + ": " + status_text(st));
  // The set a frame names is in its header: refuse before anything is written.
  if (fi.has_tables && std::none_of(sets.begin(), sets.end(), [&](const splitzip::TableSet& t) {
        return t.id() == fi.tables_id && t.dtype() == fi.dtype;
      }))
    fail(exit_code_for(splitzip::Status::missing_tables),
         where + ": " + status_text(splitzip::Status::missing_tables) + ": " + missing_tables_hint(fi.tables_id));
  return fi;
}

std::string limit_text(const std::string& what, uint64_t decoded, uint64_t max_size, bool at_least) {
  return "decompress: " + what + " decodes to " + (at_least ? "at least " : "") + std::to_string(decoded) +
         " bytes, over the --max-size limit of " + std::to_string(max_size) + ": " +
         status_text(splitzip::Status::limit_exceeded);
}

struct ScanResult {
  uint64_t frames = 0, decoded = 0, max_frame = 0, max_decoded = 0;
  // Per frame: where it starts in the input and in the output (16 bytes a
  // frame: 2 MiB for 64 GiB of default frames).
  std::vector<uint64_t> in_off, out_off;
  // Container headers to write before a frame's data, by frame index.
  std::map<uint64_t, std::string> prefix;
};

// Reads the whole frame at `off` (frames with a tensor descriptor only).
std::vector<uint8_t> read_frame(const InputFd& in, uint64_t off, uint64_t size, const std::string& what) {
  std::vector<uint8_t> f(size);
  if (in.read_at(f.data(), size, off) != size) fail(kExitIo, what + ": the input shrank while it was read");
  return f;
}

// A regular file is scanned header by header (64-byte preads, no data read)
// before any output exists: a bad header anywhere, or a total over
// --max-size, fails with nothing written.
ScanResult scan_headers(const InputFd& in, uint64_t max_size, const std::string& what,
                        const std::vector<splitzip::TableSet>& sets) {
  ScanResult r;
  ContainerRestorer restorer;
  uint64_t off = 0;
  uint8_t hdr[splitzip::kHeaderSize];
  while (off < in.size()) {
    const uint64_t avail = in.size() - off;
    uint64_t got = 0;
    while (got < std::min<uint64_t>(avail, sizeof hdr)) {
      const ssize_t n = pread(in.fd(), hdr + got, sizeof hdr - got, static_cast<off_t>(in.start() + off + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(kExitIo, what + ": read failed: " + std::strerror(errno));
      if (n == 0) break;
      got += static_cast<uint64_t>(n);
    }
    const splitzip::FrameInfo fi = check_header(hdr, got, true, avail, r.frames, off, what, sets);
    std::string prefix;
    if (fi.has_tensor) {
      const std::vector<uint8_t> f = read_frame(in, off, fi.frame_size, what);
      prefix = restorer.next(fi, f.data(), r.frames, off, "decompress: " + what);
    } else {
      prefix = restorer.next(fi, nullptr, r.frames, off, "decompress: " + what);
    }
    if (fi.decoded_size + prefix.size() > UINT64_MAX - r.decoded)
      fail(kExitLimit, what + ": decoded size of the stream overflows 64 bits");
    r.in_off.push_back(off);
    r.out_off.push_back(r.decoded);
    r.decoded += fi.decoded_size + prefix.size();
    if (!prefix.empty()) r.prefix[r.frames] = std::move(prefix);
    r.max_frame = std::max(r.max_frame, fi.frame_size);
    r.max_decoded = std::max(r.max_decoded, fi.decoded_size);
    ++r.frames;
    off += fi.frame_size;
  }
  restorer.finish("decompress: " + what);
  if (max_size && r.decoded > max_size) fail(kExitLimit, limit_text(what, r.decoded, max_size, false));
  return r;
}

}  // namespace

int cmd_decompress(int argc, char** argv) {
  std::vector<OptSpec> specs = {{"backend", 0, true}, {"max-size", 0, true}, {"tables", 0, true}};
  add_specs(specs, output_option_specs());
  add_specs(specs, {{"quiet", 'q', false}, {"verbose", 'v', false}, {"help", 'h', false}});
  Args a("decompress", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  quiet_option(a, "decompress");
  if (a.positional().size() != 1) fail(kExitUsage, "decompress: expected one input file (see --help)");
  if (a.has("keep") && a.has("rm")) fail(kExitUsage, "decompress: -k/--keep and --rm conflict");
  if (a.has("sync") && a.has("no-sync")) fail(kExitUsage, "decompress: --sync and --no-sync conflict");
  if (a.has("stdout") && a.value("output") && *a.value("output") != "-")
    fail(kExitUsage, "decompress: -c/--stdout and -o conflict");
  const std::string in_path = a.positional()[0];
  const uint64_t max_size = a.size("max-size", kDefaultMaxSize);
  const uint32_t coders_wanted = coder_threads_option(a);
  const std::string out_path =
      a.has("stdout") ? std::string("-") : a.value("output") ? *a.value("output") : default_output(in_path);
  const bool force = a.has("force");
  if (in_path != "-" && out_path != "-" && same_file(in_path, out_path))
    fail(kExitUsage, "decompress: output " + out_path + " is the input file");

  InputFd in(in_path);
  const std::string what = in.what();
  // Regular files (also stdin redirected from one): every header is checked
  // and the total bounded before any output. Pipes are checked frame by
  // frame as they arrive (on failure a file output is removed; stdout keeps
  // what was written and the exit code says it failed).
  const std::vector<splitzip::TableSet> tables = load_tables_files(a);
  ScanResult scan;
  if (in.regular()) scan = scan_headers(in, max_size, what, tables);

  splitzip::DecompressOptions opts;
  opts.tables = tables.data();
  opts.n_tables = tables.size();
  opts.backend = a.value("backend") ? a.value("backend")->c_str() : nullptr;
  opts.max_output_bytes = max_size;
  opts.verify_checksum = true;
  splitzip::DecompressOptions big_opts = opts;
  opts.threads = 1;
  big_opts.threads = static_cast<int>(coders_wanted);

  const uint32_t coders = coders_wanted;
  AtomicOutput out(out_path, force, !a.has("no-sync"), file_meta(in_path));
  Progress progress("decompress", in.regular() ? scan.decoded : 0);
  std::string backends;
  uint64_t done = 0, in_total = 0, frames = 0;
  auto account = [&](const PipelineSlot& s) {
    done += s.out_size;
    in_total += s.in_size;
    if (s.backend && backends.find(s.backend) == std::string::npos)
      backends += std::string(backends.empty() ? "" : ",") + s.backend;
    progress.update(done);
  };
  // Decodes slot.in (frame fi, at input offset aux[0], output offset
  // aux[1]) into slot.out; on any coder thread.
  auto decode = [&](PipelineSlot& s, const splitzip::FrameInfo& fi, bool big) {
    s.out.reserve(fi.decoded_size);
    const splitzip::Result r =
        splitzip::decompress(s.in.data(), s.in_size, s.out.data(), fi.decoded_size, big ? big_opts : opts);
    splitzip::FrameView view;
    view.data = s.in.data();
    view.size = s.in_size;
    view.offset = s.aux[0];
    view.info = fi;
    check_decode(r, view, s.aux[1], "decompress: " + what + ": " + frame_where(static_cast<size_t>(s.index), s.aux[0]));
    if (r.size != fi.decoded_size)
      fail(kExitInternal, "decompress: frame " + std::to_string(s.index) + " decoded to an unexpected size");
    s.out_size = r.size;
    s.backend = r.backend;
  };

  if (in.regular() && out.positional() && scan.max_frame <= kBigFrameBytes && scan.max_decoded <= kBigFrameBytes) {
    // A scanned regular file into a temp file: every frame's place in the
    // input and the output is known, so N workers each pread, decode and
    // pwrite whole frames, with no ordering between them at all.
    std::vector<PipelineSlot> bufs(coders);
    for (PipelineSlot& b : bufs) {
      b.in.reserve(std::max<uint64_t>(scan.max_frame, splitzip::kHeaderSize));
      b.out.reserve(scan.max_decoded);
    }
    std::mutex mu;
    run_frames_parallel(
        coders,
        [&](uint32_t worker, uint64_t i) {
          if (i >= scan.frames) return false;
          PipelineSlot& s = bufs[worker];
          s.index = i;
          s.aux[0] = scan.in_off[i];
          s.aux[1] = scan.out_off[i];
          const uint64_t end = i + 1 < scan.frames ? scan.in_off[i + 1] : in.size();
          s.in_size = end - s.aux[0];
          if (in.read_at(s.in.data(), s.in_size, s.aux[0]) != s.in_size)
            fail(kExitIo, "decompress: " + what + ": the input shrank while it was read");
          // The header again, from the bytes actually decoded.
          const splitzip::FrameInfo fi = check_header(s.in.data(), s.in_size, true, s.in_size, i, s.aux[0], what, tables);
          if (fi.frame_size != s.in_size)
            fail(kExitIo, "decompress: " + what + ": the input changed while it was read");
          decode(s, fi, false);
          // A container's header goes first (FORMAT.md 4.8).
          const auto p = scan.prefix.find(i);
          const uint64_t pre = p != scan.prefix.end() ? p->second.size() : 0;
          if (pre) out.write_at(p->second.data(), pre, s.aux[1]);
          out.write_at(s.out.data(), s.out_size, s.aux[1] + pre);
          std::lock_guard<std::mutex> lk(mu);
          done += pre;
          account(s);
          return true;
        },
        nullptr);
    out.set_written(scan.decoded);
    frames = scan.frames;
  } else {
    FramePipeline pipe(coders, 2 * coders + 2);
    // Buffers: exactly the largest frame for a scanned file (up to the big
    // frame limit), else 1 MiB to start, grown when a frame needs more.
    const uint64_t in_cap = in.regular() ? std::min(scan.max_frame, kBigFrameBytes) : uint64_t{1} << 20;
    const uint64_t out_cap = in.regular() ? std::min(scan.max_decoded, kBigFrameBytes) : uint64_t{1} << 20;
    for (PipelineSlot& s : pipe.slots()) {
      s.in.reserve(std::max<uint64_t>(in_cap, splitzip::kHeaderSize));
      s.out.reserve(out_cap);
    }
    std::vector<splitzip::FrameInfo> infos(pipe.slots().size());
    std::vector<std::string> prefixes(pipe.slots().size());
    ContainerRestorer restorer;
    uint64_t in_off = 0, decoded_total = 0;

    auto produce = [&](PipelineSlot& s) {
      const uint64_t got = in.read(s.in.data(), splitzip::kHeaderSize);
      if (got == 0) return FramePipeline::Produced::none;
      const bool known = in.regular();
      const splitzip::FrameInfo fi =
          check_header(s.in.data(), got, known, known ? in.size() - in_off : 0, s.index, in_off, what, tables);
      if (fi.decoded_size > UINT64_MAX - decoded_total)
        fail(kExitLimit, "decompress: " + what + ": decoded size of the stream overflows 64 bits");
      if (max_size && decoded_total + fi.decoded_size > max_size)
        fail(kExitLimit, limit_text(what, decoded_total + fi.decoded_size, max_size, true));
      const bool big = fi.frame_size > kBigFrameBytes || fi.decoded_size > kBigFrameBytes;
      // A big frame travels alone: wait until every earlier frame is written.
      if (big && !pipe.wait_drained(s.index)) return FramePipeline::Produced::none;
      const uint64_t have = read_growing(in, s.in, fi.frame_size, splitzip::kHeaderSize);
      if (have < fi.frame_size)
        fail(exit_code_for(splitzip::Status::truncated),
             "decompress: " + what + ": " + frame_where(static_cast<size_t>(s.index), in_off) + ": " +
                 status_text(splitzip::Status::truncated));
      infos[s.index % infos.size()] = fi;
      std::string& prefix = prefixes[s.index % prefixes.size()];
      if (known) {  // the scan has them
        const auto p = scan.prefix.find(s.index);
        prefix = p != scan.prefix.end() ? p->second : std::string();
      } else {
        prefix = restorer.next(fi, s.in.data(), s.index, in_off, "decompress: " + what);
      }
      if (max_size && decoded_total + fi.decoded_size + prefix.size() > max_size)
        fail(kExitLimit, limit_text(what, decoded_total + fi.decoded_size + prefix.size(), max_size, true));
      s.in_size = fi.frame_size;
      s.aux[0] = in_off;
      s.aux[1] = decoded_total;
      s.aux[2] = big ? 1 : 0;
      in_off += fi.frame_size;
      decoded_total += fi.decoded_size + prefix.size();
      return FramePipeline::Produced::frame;
    };
    auto code = [&](PipelineSlot& s) { decode(s, infos[s.index % infos.size()], s.aux[2] != 0); };
    auto consume = [&](PipelineSlot& s) {
      std::string& prefix = prefixes[s.index % prefixes.size()];
      if (!prefix.empty()) {
        out.write(prefix.data(), prefix.size());
        done += prefix.size();
        std::string().swap(prefix);
      }
      out.write(s.out.data(), s.out_size);
      account(s);
      if (s.aux[2]) {  // give a big frame's memory back
        s.in.shrink_to(std::max<uint64_t>(in_cap, splitzip::kHeaderSize));
        s.out.shrink_to(out_cap);
      }
    };
    frames = pipe.run(produce, code, consume);
    if (!in.regular()) restorer.finish("decompress: " + what);
  }
  progress.finish();
  out.commit();

  if (a.has("rm") && in_path != "-" && is_regular_file(in_path)) {
    if (unlink(in_path.c_str()) != 0)
      fail(kExitIo, "decompress: " + in_path + ": output written but cannot remove input");
  }
  if (a.has("verbose")) {
    std::fprintf(stderr, "splitzip: %s -> %s: %llu frame(s), %llu -> %llu bytes, %u thread(s), backend %s\n",
                 what.c_str(), out_path.c_str(), static_cast<unsigned long long>(frames),
                 static_cast<unsigned long long>(in_total), static_cast<unsigned long long>(done), coders,
                 backends.empty() ? "none (no frames)" : backends.c_str());
  }
  return kExitOk;
}

}  // namespace szcli
