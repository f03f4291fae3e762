// SPDX-License-Identifier: Apache-2.0
// splitzip verify: decode a frame stream, compare with the original, and
// re-encode the original with the chosen backend to check that it produces
// the very same bytes. CI uses it to cross-check GPU-made frames on CPU.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/container_roundtrip.h"
#include "tools/cli/frame_reader.h"
#include "tools/cli/frames.h"
#include "tools/cli/pipeline.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip verify [options] IN.sz ORIGINAL\n"
    "  Exit 0 only if (1) IN.sz decodes to exactly ORIGINAL's elements and\n"
    "  (2) re-encoding ORIGINAL with the same codebook, chunk size and checksum\n"
    "  flag, frame by frame, gives IN.sz byte for byte. Encoders write format\n"
    "  v2, so frames of format v1 are checked by (1) only.\n"
    "  A corrupt v2 frame with checksums names its first corrupt checksum block.\n"
    "  --backend B     backend for both decoding and re-encoding\n"
    "  --tables F      a table set file the frames name (repeat for several sets)\n"
    "  -T, --threads N worker threads\n"
    "  --dtype/--format/--tensor   how to read ORIGINAL (as for compress; a raw\n"
    "                  ORIGINAL defaults to the frames' dtype)\n"
    "  -q, --quiet     print errors only (no OK line)\n"
    "  -v, --verbose   one line per frame\n";

uint64_t first_difference(const uint8_t* a, const uint8_t* b, uint64_t n) {
  uint64_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// A stored frame carries no codebook. Re-encoding with the dynamic codebook
// reproduces frames the encoder stored on its own; a frame stored because a
// user codebook fitted badly is reproduced with a one-entry codebook made
// of the rarest exponent, which turns (nearly) every element into an escape.
bool reencode_stored(const splitzip::FrameView& f, const uint8_t* orig, splitzip::CompressOptions opts, uint8_t* dst,
                     uint64_t cap, splitzip::Result* r) {
  opts.codebook = nullptr;
  *r = splitzip::compress(f.info.dtype, orig, f.info.n_elems, dst, cap, opts);
  if (!r->ok() || (r->size == f.info.frame_size && std::memcmp(dst, f.data, r->size) == 0)) return true;
  splitzip::Histogram h(f.info.dtype);
  h.add(orig, f.info.n_elems);
  const uint32_t limit = splitzip::dtype_bytes(f.info.dtype) == 1 || f.info.dtype == splitzip::Dtype::fp16 ? 32 : 256;
  uint32_t rare = 0;
  for (uint32_t x = 1; x < limit; ++x)
    if (h.count(x) < h.count(rare)) rare = x;
  splitzip::Codebook cb;
  cb.dtype = f.info.dtype;
  cb.count = 1;
  cb.entries[0] = static_cast<uint8_t>(rare);
  opts.codebook = &cb;
  *r = splitzip::compress(f.info.dtype, orig, f.info.n_elems, dst, cap, opts);
  return true;
}

}  // namespace

int cmd_verify(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  specs.insert(specs.end(), {{"backend", 0, true},
                             {"tables", 0, true},
                             {"threads", 'T', true},
                             {"quiet", 'q', false},
                             {"verbose", 'v', false},
                             {"help", 'h', false}});
  Args a("verify", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  quiet_option(a, "verify");
  if (a.positional().size() != 2) fail(kExitUsage, "verify: expected IN.sz and ORIGINAL (see --help)");
  const std::string sz_path = a.positional()[0], orig_path = a.positional()[1];
  if (sz_path == "-" && orig_path == "-") fail(kExitUsage, "verify: only one input can be stdin");
  const bool verbose = a.has("verbose");

  // Both inputs stream: IN.sz one frame at a time, ORIGINAL one frame's
  // slice at a time (read, never mapped), so memory holds about two frames.
  InputFd in(sz_path);
  FrameReader reader(in, "verify");
  splitzip::FrameInfo fi;
  bool have_frame = reader.next(&fi);
  const uint8_t* frame = have_frame ? reader.read_frame() : nullptr;
  // A stream with a container header (a .npy or whole .safetensors file)
  // decodes to the file itself: compare it with ORIGINAL's bytes.
  splitzip::TensorDesc desc0;
  bool desc0_present = false;
  if (have_frame && fi.has_tensor) {
    const splitzip::Status st = splitzip::read_tensor_desc(frame, fi.frame_size, &desc0, &desc0_present);
    if (st != splitzip::Status::ok) fail(exit_code_for(st), reader.where() + ": tensor descriptor: " + status_text(st));
  }
  const bool whole_file = desc0_present && desc0.container != splitzip::ContainerKind::none;

  InputOptions iopt = input_options(a);
  InputFormat ofmt = InputFormat::raw;
  if (iopt.format.empty()) ofmt = orig_path == "-" ? InputFormat::raw : format_from_extension(orig_path);
  else if (!parse_format(iopt.format, &ofmt)) fail(kExitUsage, "verify: unknown --format '" + iopt.format + "'");
  splitzip::Dtype ext_dtype;
  // A raw ORIGINAL with no dtype from --dtype or its name is plain bytes:
  // read it with 1-byte elements and let each frame say what it holds.
  const bool typed = !whole_file && (ofmt != InputFormat::raw || iopt.hint.given ||
                                     (orig_path != "-" && dtype_from_extension(orig_path, &ext_dtype)));
  // ORIGINAL's bytes to compare: a file read with read() (its payload for a
  // container on disk, all of it for a restored file), else in memory.
  std::unique_ptr<InputFd> ofd;
  TensorInput orig;
  TensorView ov;
  uint64_t orig_size = 0;
  bool orig_size_known = false;
  if (whole_file || !typed) {
    ofd.reset(new InputFd(orig_path));
    orig_size_known = ofd->regular();
    orig_size = ofd->size();
  } else {
    orig = TensorInput::load(orig_path, iopt, false);
    ov = orig.view();
    uint64_t payload_off = 0;
    if (orig.payload_in_file(&payload_off)) {
      ofd.reset(new InputFd(orig_path));
      if (ofd->regular()) ofd->restrict_to(payload_off, ov.bytes);
      else ofd.reset();
    }
    orig_size_known = true;
    orig_size = ov.bytes;
  }
  uint64_t orig_read = 0;  // bytes of ORIGINAL consumed
  AlignedBuffer obuf, dec, enc;
  // The next `n` bytes of ORIGINAL (fewer at its end).
  auto orig_next = [&](uint64_t n) -> std::pair<const uint8_t*, uint64_t> {
    if (!ofd) {
      const uint64_t got = std::min(n, ov.bytes - orig_read);
      const uint8_t* p = ov.data + orig_read;
      orig_read += got;
      return {p, got};
    }
    obuf.reserve(n);
    const uint64_t want = orig_size_known ? std::min(n, orig_size - orig_read) : n;
    const uint64_t got = ofd->read(obuf.data(), want);
    orig_read += got;
    return {obuf.data(), got};
  };

  const char* backend = a.value("backend") ? a.value("backend")->c_str() : nullptr;
  const std::vector<splitzip::TableSet> tables = load_tables_files(a);
  splitzip::DecompressOptions dopts;
  dopts.tables = tables.data();
  dopts.n_tables = tables.size();
  dopts.backend = backend;
  dopts.threads = threads_option(a);
  dopts.verify_checksum = true;

  uint64_t off = 0;  // bytes of the decoded stream checked so far
  size_t old_frames = 0;  // format v1: decoded and compared only
  std::string used;
  ContainerRestorer restorer;
  auto compare = [&](const uint8_t* data, uint64_t n, const std::string& where) {
    const auto o = orig_next(n);
    const uint64_t diff = first_difference(data, o.first, o.second);
    if (diff != o.second)
      fail(kExitMismatch, where + ": MISMATCH: decoded data differs from ORIGINAL at byte " + std::to_string(off + diff));
    if (o.second < n)
      fail(kExitMismatch, where + ": MISMATCH: the frames decode to more bytes than ORIGINAL's " +
                              std::to_string(orig_read));
    off += n;
    return o.first;
  };
  for (; have_frame; have_frame = reader.next(&fi), frame = have_frame ? reader.read_frame() : nullptr) {
    splitzip::FrameView f;
    f.data = frame;
    f.size = fi.frame_size;
    f.offset = reader.offset();
    f.info = fi;
    const size_t i = static_cast<size_t>(reader.index());
    const std::string where = "verify: " + frame_where(i, f.offset);
    if (typed && f.info.dtype != ov.dtype)
      fail(kExitMismatch, where + ": frame dtype " + splitzip::dtype_name(f.info.dtype) + " but ORIGINAL is " +
                              splitzip::dtype_name(ov.dtype));
    // A container's header, restored, is part of what must match.
    const std::string prefix = restorer.next(fi, frame, i, f.offset, "verify: " + in.what());
    if (!prefix.empty()) compare(reinterpret_cast<const uint8_t*>(prefix.data()), prefix.size(), where);
    // (1) decode and compare with the matching slice of ORIGINAL.
    dec.reserve(std::max<uint64_t>(f.info.decoded_size, 1));
    const splitzip::Result d = splitzip::decompress(f.data, f.size, dec.data(), f.info.decoded_size, dopts);
    check_decode(d, f, off, where + ": decode failed");
    if (d.backend && used.find(d.backend) == std::string::npos) used += std::string(used.empty() ? "" : ",") + d.backend;
    const uint8_t* o = compare(dec.data(), f.info.decoded_size, where);

    if (f.info.version < 2) {
      // (2) needs an encoder of the frame's version; this one writes v2 and v3 (FORMAT.md 12).
      if (verbose)
        std::fprintf(stderr, "frame %zu: %" PRIu64 " elements, %s, format v%u: decode identical (not re-encoded)\n",
                     i, f.info.n_elems, frame_coding(f.info), f.info.version);
      ++old_frames;
      continue;
    }
    // (2) re-encode ORIGINAL's slice with the frame's own parameters,
    // its tensor descriptor included.
    splitzip::CompressOptions copts;
    copts.chunk_log2 = f.info.chunk_log2;
    copts.checksum = f.info.has_checksum;
    copts.backend = backend;
    copts.threads = dopts.threads;
    splitzip::TensorDesc desc;
    bool has_desc = false;
    if (f.info.has_tensor) {
      check_status(splitzip::read_tensor_desc(f.data, f.size, &desc, &has_desc), where + ": tensor descriptor");
      if (has_desc) copts.tensor = &desc;
    }
    const uint64_t cap = splitzip::compress_bound(f.info.dtype, f.info.n_elems) +
                         (has_desc ? splitzip::tensor_desc_size(desc) : 0);
    enc.reserve(cap);
    splitzip::Result r;
    if (f.info.stored) {
      reencode_stored(f, o, copts, enc.data(), cap, &r);
    } else {
      copts.mode = f.info.mode;  // mode 1 (capacity) frames carry no codebook
      copts.codebook = f.info.mode == splitzip::Mode::capacity ? nullptr : &f.info.codebook;
      // A frame that names a set decoded above, so the set is among the given ones.
      for (const splitzip::TableSet& t : tables)
        if (f.info.has_tables && t.id() == f.info.tables_id) copts.tables = &t;
      r = splitzip::compress(f.info.dtype, o, f.info.n_elems, enc.data(), cap, copts);
    }
    check_status(r.status, where + ": re-encode failed");
    if (r.backend && used.find(r.backend) == std::string::npos) used += std::string(used.empty() ? "" : ",") + r.backend;
    if (r.size != f.info.frame_size || std::memcmp(enc.data(), f.data, r.size) != 0) {
      const uint64_t bd = first_difference(enc.data(), f.data, std::min(r.size, f.info.frame_size));
      fail(kExitMismatch, where + ": MISMATCH: re-encoding with backend " + (r.backend ? r.backend : "?") +
                              " gives a different bitstream (" + std::to_string(r.size) + " vs " +
                              std::to_string(f.info.frame_size) + " bytes, first difference at frame byte " +
                              std::to_string(bd) + ")");
    }
    if (verbose)
      std::fprintf(stderr, "frame %zu: %" PRIu64 " elements, %s, decode and re-encode identical\n", i,
                   f.info.n_elems, frame_coding(f.info));
  }
  restorer.finish("verify: " + in.what());
  // ORIGINAL must end where the frames do.
  uint8_t extra = 0;
  const bool longer = orig_size_known ? orig_read < orig_size : (ofd && ofd->read(&extra, 1) == 1);
  if (longer)
    fail(kExitMismatch, "verify: MISMATCH: ORIGINAL has " +
                            (orig_size_known ? std::to_string(orig_size) : "more than " + std::to_string(off)) +
                            " bytes, the frames decode to " + std::to_string(off));
  std::string note;
  if (old_frames != 0)
    note = "; " + std::to_string(old_frames) + " format v1 frame(s) decoded identically but not re-encoded";
  if (!a.has("quiet"))
    std::printf("OK: %s matches %s (%" PRIu64 " frame(s), %" PRIu64
                " bytes decoded and re-encoded identically, backend %s%s)\n",
                sz_path.c_str(), orig_path.c_str(), reader.index(), off,
                used.empty() ? "none (no frames)" : used.c_str(), note.c_str());
  return kExitOk;
}

}  // namespace szcli
