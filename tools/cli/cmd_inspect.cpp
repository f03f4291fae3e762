// SPDX-License-Identifier: Apache-2.0
// splitzip inspect: header fields of every frame, without decoding.
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/file_io.h"
#include "tools/cli/frame_reader.h"
#include "tools/cli/frames.h"
#include "tools/cli/json_strict.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip inspect [--json] IN.sz\n"
    "  Prints each frame's header: dtype, mode and coding (fast or capacity),\n"
    "  chunk size, element and escape counts (fast) or exponent bytes (capacity),\n"
    "  escape rate, sizes, ratio, the predicted ratio, the codebook (or the\n"
    "  id of the table set a capacity frame names) and\n"
    "  the checksum (v2: its block size and block count). Reads headers only\n"
    "  (use `verify` to decode) and each frame's tensor descriptor, one frame at\n"
    "  a time. An empty file is a stream of 0 frames.\n"
    "  --json   one JSON object; a stream of 0 or several frames has a \"frames\" array\n";

double rate(uint64_t num, uint64_t den) { return den ? static_cast<double>(num) / static_cast<double>(den) : 0.0; }

// The content checksum's kind: v1 hashes all bytes with XXH64, v2 hashes
// blocks of 2^checksum_block_log2 bytes with XXH3-64 (FORMAT.md v2).
const char* checksum_kind(const splitzip::FrameInfo& i) {
  if (!i.has_checksum) return "none";
  return i.checksum_block_log2 != 0 ? "xxh3-blocks" : "xxh64";
}

uint64_t checksum_block_size(const splitzip::FrameInfo& i) {
  return i.checksum_block_log2 != 0 && i.checksum_block_log2 < 64 ? uint64_t{1} << i.checksum_block_log2 : 0;
}

// A frame's tensor descriptor (FORMAT.md 4.8), kept for printing.
struct TensorText {
  bool present = false;
  splitzip::TensorDesc t;
  std::string name;
};

const char* container_name(splitzip::ContainerKind k) {
  return k == splitzip::ContainerKind::npy ? "npy" : k == splitzip::ContainerKind::safetensors ? "safetensors" : "none";
}

std::string dims_text(const splitzip::TensorDesc& t) {
  std::string s = "(";
  for (uint32_t i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.dims[i]);
  return s + (t.rank == 1 ? ",)" : ")");
}

void tensor_json(Json& j, const TensorText& d) {
  if (!d.present) {
    j["tensor"] = nullptr;
    return;
  }
  Json t = Json::object();
  t["dtype"] = splitzip::dtype_name(d.t.dtype);
  Json shape = Json::array();
  for (uint32_t i = 0; i < d.t.rank; ++i) shape.push_back(d.t.dims[i]);
  t["shape"] = std::move(shape);
  t["total_elems"] = d.t.total_elems;
  t["name"] = d.name;
  t["container"] = container_name(d.t.container);
  t["container_header_size"] = static_cast<uint64_t>(d.t.container_size);
  j["tensor"] = std::move(t);
}

void frame_json(Json& j, const splitzip::FrameView& f) {
  const splitzip::FrameInfo& i = f.info;
  j["offset"] = f.offset;
  j["version"] = static_cast<uint64_t>(i.version);
  j["dtype"] = splitzip::dtype_name(i.dtype);
  j["mode"] = i.stored ? "stored" : "coded";
  j["coding"] = frame_coding(i);
  j["chunk_log2"] = static_cast<uint64_t>(i.chunk_log2);
  j["chunk_size"] = uint64_t{1} << i.chunk_log2;
  j["n_elems"] = i.n_elems;
  if (is_capacity(i)) {
    j["escape_count"] = nullptr;
    j["escape_rate"] = nullptr;
    j["exponent_bytes"] = i.escape_count;
    j["exponent_bits_per_elem"] = rate(8 * i.escape_count, i.n_elems);
  } else {
    j["escape_count"] = i.escape_count;
    j["escape_rate"] = rate(i.escape_count, i.n_elems);
    j["exponent_bytes"] = nullptr;
    j["exponent_bits_per_elem"] = nullptr;
  }
  j["frame_size"] = i.frame_size;
  j["decoded_size"] = i.decoded_size;
  j["ratio"] = rate(i.decoded_size, i.frame_size);
  if (is_capacity(i)) j["predicted_ratio"] = nullptr;
  else j["predicted_ratio"] = predicted_ratio(i.dtype, rate(i.escape_count, i.n_elems));
  j["checksum"] = i.has_checksum;
  j["checksum_kind"] = checksum_kind(i);
  if (i.has_checksum) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, i.content_checksum);
    j["content_checksum"] = hex;
  } else {
    j["content_checksum"] = nullptr;
  }
  if (checksum_block_size(i) != 0) j["checksum_block_size"] = checksum_block_size(i);
  else j["checksum_block_size"] = nullptr;
  j["checksum_blocks"] = i.checksum_blocks;
  Json cb = Json::array();
  for (unsigned c = 0; c < i.codebook.count && c < 16; ++c) cb.push_back(static_cast<uint64_t>(i.codebook.entries[c]));
  j["codebook"] = std::move(cb);
  if (i.has_tables) j["tables_id"] = tables_id_text(i.tables_id);
  else j["tables_id"] = nullptr;
}

void frame_text(const splitzip::FrameView& f, size_t index) {
  const splitzip::FrameInfo& i = f.info;
  const double e = rate(i.escape_count, i.n_elems);
  std::printf("frame %zu at offset %" PRIu64 "\n", index, f.offset);
  std::printf("  version %u, dtype %s, mode %s, chunk %" PRIu64 " (log2 %u)\n", i.version,
              splitzip::dtype_name(i.dtype), i.stored ? "stored" : is_capacity(i) ? "coded (capacity)" : "coded (fast)",
              uint64_t{1} << i.chunk_log2, i.chunk_log2);
  if (is_capacity(i)) {
    std::printf("  elements %" PRIu64 ", exponent bytes %" PRIu64 " (%.3f bits per exponent)\n", i.n_elems,
                i.escape_count, rate(8 * i.escape_count, i.n_elems));
    std::printf("  frame %" PRIu64 " bytes, decoded %" PRIu64 " bytes, ratio %.4f\n", i.frame_size, i.decoded_size,
                rate(i.decoded_size, i.frame_size));
    if (i.has_tables)
      std::printf("  tables: set %s (calibrated; decode with --tables FILE)\n", tables_id_text(i.tables_id).c_str());
    else
      std::printf("  codebook: none (per-block Huffman tables)\n");
  } else {
    std::printf("  elements %" PRIu64 ", escapes %" PRIu64 " (rate %.4f%%)\n", i.n_elems, i.escape_count, 100.0 * e);
    std::printf("  frame %" PRIu64 " bytes, decoded %" PRIu64 " bytes, ratio %.4f (predicted %.4f)\n", i.frame_size,
                i.decoded_size, rate(i.decoded_size, i.frame_size), predicted_ratio(i.dtype, e));
    if (i.stored) std::printf("  codebook: none (stored)\n");
    else std::printf("  codebook %s\n", codebook_text(i.codebook).c_str());
  }
  if (!i.has_checksum)
    std::printf("  checksum none\n");
  else if (checksum_block_size(i) != 0)
    std::printf("  checksum xxh3 %016" PRIx64 " over %" PRIu64 " block(s) of %" PRIu64 " bytes\n", i.content_checksum,
                i.checksum_blocks, checksum_block_size(i));
  else
    std::printf("  checksum xxh64 %016" PRIx64 "\n", i.content_checksum);
}

void tensor_text(const TensorText& d) {
  if (!d.present) return;
  std::printf("  tensor %s shape %s, %" PRIu64 " elements%s%s, container %s", splitzip::dtype_name(d.t.dtype),
              dims_text(d.t).c_str(), d.t.total_elems, d.name.empty() ? "" : ", name ", d.name.c_str(),
              container_name(d.t.container));
  if (d.t.container != splitzip::ContainerKind::none) std::printf(" (%u header bytes)", d.t.container_size);
  std::printf("\n");
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  Args a("inspect", {{"json", 0, false}, {"help", 'h', false}}, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  if (a.positional().size() != 1) fail(kExitUsage, "inspect: expected one input file (see --help)");
  const std::string path = a.positional()[0];
  // One frame at a time: headers are checked as they arrive (a pipe of
  // junk stops at its first header), bodies are skipped, and only a frame
  // with a tensor descriptor is read, to print it.
  InputFd in(path);
  const std::string what = path == "-" ? "stdin" : path;
  FrameReader reader(in, "inspect");
  StreamFrames s;
  std::vector<TensorText> tensors;
  splitzip::FrameInfo fi;
  uint64_t exp_bytes = 0, fast_elems = 0;  // capacity frames' exponent bytes; elements of the other frames
  while (reader.next(&fi)) {
    splitzip::FrameView f;
    f.size = fi.frame_size;
    f.offset = reader.offset();
    f.info = fi;
    TensorText d;
    if (fi.has_tensor) {
      const splitzip::Status st = splitzip::read_tensor_desc(reader.read_frame(), fi.frame_size, &d.t, &d.present);
      if (st != splitzip::Status::ok)
        fail(exit_code_for(st), reader.where() + ": tensor descriptor: " + status_text(st));
      d.name.assign(d.t.name ? d.t.name : "", d.t.name_size);
      d.t.name = nullptr;
      d.t.container_header = nullptr;
    } else {
      reader.skip();
    }
    s.decoded_size += fi.decoded_size;
    s.n_elems += fi.n_elems;
    if (is_capacity(fi)) {
      exp_bytes += fi.escape_count;
    } else {
      s.escapes += fi.escape_count;
      fast_elems += fi.n_elems;
    }
    s.frames.push_back(f);
    tensors.push_back(d);
  }
  const uint64_t in_size = reader.total();

  if (a.has("json")) {
    Json j = Json::object();
    j["file"] = what;
    j["frame_count"] = static_cast<uint64_t>(s.frames.size());
    if (s.frames.size() == 1) {
      frame_json(j, s.frames[0]);
      tensor_json(j, tensors[0]);
    } else {
      // Stream totals at top level, so n_elems/ratio read the same either way.
      j["n_elems"] = s.n_elems;
      // Escapes of the fast (and stored) frames, over their elements.
      j["escape_count"] = s.escapes;
      j["escape_rate"] = rate(s.escapes, fast_elems);
      j["exponent_bytes"] = exp_bytes;  // of the capacity frames
      j["compressed_size"] = in_size;
      j["decoded_size"] = s.decoded_size;
      j["ratio"] = rate(s.decoded_size, in_size);
      Json frames = Json::array();
      for (const splitzip::FrameView& f : s.frames) {
        Json fj = Json::object();
        frame_json(fj, f);
        tensor_json(fj, tensors[static_cast<size_t>(&f - s.frames.data())]);
        frames.push_back(std::move(fj));
      }
      j["frames"] = std::move(frames);
    }
    std::printf("%s\n", json_text(j).c_str());
    return kExitOk;
  }

  std::printf("%s: %zu frame(s), %" PRIu64 " bytes\n", what.c_str(), s.frames.size(), in_size);
  for (size_t k = 0; k < s.frames.size(); ++k) {
    frame_text(s.frames[k], k);
    tensor_text(tensors[k]);
  }
  if (s.frames.size() > 1) {
    std::printf("total: elements %" PRIu64 ", escapes %" PRIu64 " (rate %.4f%%)", s.n_elems, s.escapes,
                100.0 * rate(s.escapes, fast_elems));
    if (exp_bytes != 0) std::printf(", capacity exponent bytes %" PRIu64, exp_bytes);
    std::printf(", decoded %" PRIu64 " bytes, ratio %.4f\n", s.decoded_size, rate(s.decoded_size, in_size));
  }
  return kExitOk;
}

}  // namespace szcli
