// SPDX-License-Identifier: Apache-2.0
// splitzip bench: encode/decode throughput per backend, mode and frame size
// on one file, next to memcpy of the same buffer.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/json_strict.h"
#include "tools/cli/pipeline.h"
#include "tools/cli/timing.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip bench [options] FILE\n"
    "  Encode and decode throughput in GB/s (1e9 bytes/s of uncompressed data;\n"
    "  median of repeated runs) per backend, mode and frame size, with memcpy of\n"
    "  the same buffer as the reference line; also ratio and escape rate. Checks\n"
    "  each round trip. Defaults are compress's: fast mode, checksum on, frames\n"
    "  of 262144 elements.\n"
    "  --dtype/--format/--tensor   how to read FILE (as for compress)\n"
    "  --backend B|all  one backend, or every available one (default: all)\n"
    "  --mode M[,M]     fast | capacity | fast,capacity (default fast)\n"
    "  --frame-size S[,S...]\n"
    "                   bytes of input per frame, as compress's --frame-size; a\n"
    "                   list times each (say 32K,64K,1M for KV pages); 'whole' =\n"
    "                   one frame (default: 262144 elements, 512 KiB of bf16).\n"
    "                   Frames are coded as one batch (compress_batch)\n"
    "  --codebook F     a codebook from `splitzip calibrate` (fast mode)\n"
    "  --tables F       a table set from `splitzip calibrate --mode capacity`\n"
    "                   (capacity mode; default --mode capacity with it)\n"
    "  -T, --threads N  worker threads (default: backend's choice)\n"
    "  --seconds S      time spent per measurement (default 1)\n"
    "  --checksum       store the XXH3 block checksums (the default)\n"
    "  --no-checksum    time the codec alone; compare the two to see its cost\n"
    "  --chunk-log2 N   chunk size 2^N (default 10)\n"
    "  --json           one JSON object instead of the table\n";

struct Row {
  std::string backend;
  splitzip::Mode mode = splitzip::Mode::fast;
  uint64_t frame_bytes = 0, frames = 0;
  bool ok = false;
  std::string error;
  uint64_t compressed = 0, escapes = 0;
  double enc_s = 0, dec_s = 0;
};

const char* mode_name(splitzip::Mode m) { return m == splitzip::Mode::capacity ? "capacity" : "fast"; }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (true) {
    const size_t c = s.find(',', p);
    out.push_back(s.substr(p, c == std::string::npos ? std::string::npos : c - p));
    if (c == std::string::npos) return out;
    p = c + 1;
  }
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  specs.insert(specs.end(), {{"backend", 0, true},
                             {"mode", 0, true},
                             {"frame-size", 0, true},
                             {"codebook", 0, true},
                             {"tables", 0, true},
                             {"threads", 'T', true},
                             {"seconds", 0, true},
                             {"checksum", 0, false},
                             {"no-checksum", 0, false},
                             {"chunk-log2", 0, true},
                             {"json", 0, false},
                             {"help", 'h', false}});
  Args a("bench", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  if (a.positional().size() != 1) fail(kExitUsage, "bench: expected one input file (see --help)");
  if (a.has("checksum") && a.has("no-checksum")) fail(kExitUsage, "bench: --checksum and --no-checksum conflict");
  const bool checksum = !a.has("no-checksum");
  const double secs = a.seconds("seconds", 1.0);
  const int threads = threads_option(a);
  const uint64_t chunk_log2 = a.u64("chunk-log2", splitzip::kDefaultChunkLog2);
  if (chunk_log2 < splitzip::kMinChunkLog2 || chunk_log2 > splitzip::kMaxChunkLog2)
    fail(kExitUsage, "bench: --chunk-log2 must be in 6..15");

  splitzip::TableSet tables;
  const bool has_tables = a.value("tables") != nullptr;
  if (has_tables) tables = load_tables_file(*a.value("tables"));
  std::vector<splitzip::Mode> modes;
  for (const std::string& m : split_list(a.value("mode") ? *a.value("mode") : has_tables ? "capacity" : "fast")) {
    if (m == "fast") modes.push_back(splitzip::Mode::fast);
    else if (m == "capacity") modes.push_back(splitzip::Mode::capacity);
    else fail(kExitUsage, "bench: --mode takes fast, capacity or fast,capacity, not '" + m + "'");
  }
  splitzip::Codebook codebook;
  const bool has_codebook = a.value("codebook") != nullptr;
  if (has_codebook) codebook = load_codebook_file(*a.value("codebook"));

  std::vector<std::string> backends;
  const std::string which = a.value("backend") ? *a.value("backend") : "all";
  if (which == "all") {
    for (size_t i = 0; i < splitzip::backend_count(); ++i)
      if (splitzip::backend_available(splitzip::backend_name(i))) backends.push_back(splitzip::backend_name(i));
  } else {
    backends.push_back(which);
  }

  const TensorInput input = TensorInput::load(a.positional()[0], input_options(a));
  const TensorView& v = input.view();
  const uint64_t bytes = v.bytes;
  const uint64_t esize = splitzip::dtype_bytes(v.dtype);

  // Elements per frame for each --frame-size (0 elements: the whole input).
  std::vector<uint64_t> frame_elems;
  for (const std::string& f : split_list(a.value("frame-size") ? *a.value("frame-size") : "")) {
    uint64_t n = kDefaultFrameElems;
    if (f == "whole") {
      n = v.n_elems;
    } else if (!f.empty()) {
      uint64_t b = 0;
      if (!parse_size(f, &b)) fail(kExitUsage, "bench: --frame-size '" + f + "' is not a size (say 64K)");
      n = b / esize;
      if (n == 0) fail(kExitUsage, "bench: --frame-size '" + f + "' holds no whole element");
    }
    frame_elems.push_back(std::min<uint64_t>(std::max<uint64_t>(std::min(n, v.n_elems), 1), splitzip::kMaxElems));
  }

  // Every frame size's frames fit in `cap`: each frame within its own bound.
  uint64_t cap = 0;
  for (uint64_t fe : frame_elems) {
    const uint64_t full = v.n_elems / fe, rest = v.n_elems % fe;
    cap = std::max(cap, full * splitzip::compress_bound(v.dtype, fe) + (rest ? splitzip::compress_bound(v.dtype, rest) : 0));
  }
  if (cap == 0) cap = splitzip::compress_bound(v.dtype, 0);
  std::unique_ptr<uint8_t[]> enc(new uint8_t[cap]);
  std::unique_ptr<uint8_t[]> dec(new uint8_t[bytes ? bytes : 1]);
  // Fault the pages in before timing anything.
  std::memset(enc.get(), 0, cap);
  std::memset(dec.get(), 0, bytes ? bytes : 1);

  const double memcpy_s = median_seconds([&] { std::memcpy(dec.get(), v.data, bytes); }, secs);

  std::vector<Row> rows;
  bool all_ok = true;
  for (const std::string& b : backends) {
    for (const splitzip::Mode mode : modes) {
      for (const uint64_t fe : frame_elems) {
        Row row;
        row.backend = b;
        row.mode = mode;
        row.frame_bytes = fe * esize;
        splitzip::CompressOptions co;
        co.backend = b.c_str();
        co.threads = threads;
        co.checksum = checksum;
        co.mode = mode;
        co.codebook = has_codebook ? &codebook : nullptr;
        co.tables = has_tables && mode == splitzip::Mode::capacity ? &tables : nullptr;
        co.chunk_log2 = static_cast<uint32_t>(chunk_log2);
        splitzip::DecompressOptions dopt;
        dopt.backend = b.c_str();
        dopt.threads = threads;
        dopt.tables = has_tables ? &tables : nullptr;
        dopt.n_tables = has_tables ? 1 : 0;

        const uint64_t nf = v.n_elems ? (v.n_elems + fe - 1) / fe : 1;
        row.frames = nf;
        std::vector<splitzip::CompressItem> ci(nf);
        uint64_t off = 0;
        for (uint64_t i = 0; i < nf; ++i) {
          const uint64_t n = std::min(fe, v.n_elems - std::min(v.n_elems, i * fe));
          ci[i].src = static_cast<const uint8_t*>(v.data) + i * fe * esize;
          ci[i].n_elems = n;
          ci[i].dst = enc.get() + off;
          ci[i].dst_capacity = splitzip::compress_bound(v.dtype, n);
          off += ci[i].dst_capacity;
        }
        std::vector<splitzip::Result> res(nf);
        const splitzip::Status cs = splitzip::compress_batch(v.dtype, ci.data(), nf, res.data(), co);
        if (cs != splitzip::Status::ok) {
          row.error = status_text(cs);
          if (which != "all" && cs != splitzip::Status::invalid_argument) check_status(cs, "bench: backend " + b);
          rows.push_back(row);
          all_ok = false;
          continue;
        }
        std::vector<splitzip::DecompressItem> di(nf);
        for (uint64_t i = 0; i < nf; ++i) {
          row.compressed += res[i].size;
          splitzip::FrameInfo fi;
          if (splitzip::frame_info(ci[i].dst, res[i].size, &fi) == splitzip::Status::ok) row.escapes += fi.escape_count;
          di[i].src = ci[i].dst;
          di[i].src_size = res[i].size;
          di[i].dst = dec.get() + i * fe * esize;
          di[i].dst_capacity = ci[i].n_elems * esize;
        }
        std::memset(dec.get(), 0xA5, bytes ? bytes : 1);  // stale bytes must not pass as output
        std::vector<splitzip::Result> dres(nf);
        const splitzip::Status ds = splitzip::decompress_batch(di.data(), nf, dres.data(), dopt);
        row.ok = ds == splitzip::Status::ok && std::memcmp(dec.get(), v.data, bytes) == 0;
        if (!row.ok) {
          row.error = ds == splitzip::Status::ok ? "round trip differs" : status_text(ds);
          rows.push_back(row);
          all_ok = false;
          continue;
        }
        row.enc_s = median_seconds([&] { splitzip::compress_batch(v.dtype, ci.data(), nf, res.data(), co); }, secs);
        row.dec_s = median_seconds([&] { splitzip::decompress_batch(di.data(), nf, dres.data(), dopt); }, secs);
        rows.push_back(row);
      }
    }
  }

  const double mgb = gb_per_s(bytes, memcpy_s);
  auto ratio = [&](const Row& r) { return r.compressed ? static_cast<double>(bytes) / static_cast<double>(r.compressed) : 0.0; };
  auto erate = [&](const Row& r) { return v.n_elems ? static_cast<double>(r.escapes) / static_cast<double>(v.n_elems) : 0.0; };
  if (a.has("json")) {
    Json j = Json::object();
    j["file"] = input.path();
    j["input"] = v.what;
    j["dtype"] = splitzip::dtype_name(v.dtype);
    j["n_elems"] = v.n_elems;
    j["bytes"] = bytes;
    j["threads"] = threads;
    j["seconds"] = secs;
    j["checksum"] = checksum;
    j["codebook"] = has_codebook ? *a.value("codebook") : std::string("dynamic");
    if (has_tables) j["tables"] = *a.value("tables");
    else j["tables"] = nullptr;
    j["memcpy_gbps"] = mgb;
    Json results = Json::array();
    for (const Row& r : rows) {
      Json rj = Json::object();
      rj["backend"] = r.backend;
      rj["mode"] = mode_name(r.mode);
      rj["frame_bytes"] = r.frame_bytes;
      rj["frames"] = r.frames;
      rj["roundtrip_ok"] = r.ok;
      if (!r.ok) rj["error"] = r.error;
      rj["compressed_bytes"] = r.compressed;
      rj["ratio"] = ratio(r);
      rj["escape_count"] = r.escapes;
      rj["escape_rate"] = erate(r);
      rj["encode_gbps"] = r.ok ? gb_per_s(bytes, r.enc_s) : 0.0;
      rj["decode_gbps"] = r.ok ? gb_per_s(bytes, r.dec_s) : 0.0;
      rj["encode_vs_memcpy"] = r.ok && mgb > 0 ? gb_per_s(bytes, r.enc_s) / mgb : 0.0;
      rj["decode_vs_memcpy"] = r.ok && mgb > 0 ? gb_per_s(bytes, r.dec_s) / mgb : 0.0;
      results.push_back(std::move(rj));
    }
    j["results"] = std::move(results);
    std::printf("%s\n", json_text(j).c_str());
  } else {
    std::printf("%s: %s, %" PRIu64 " elements, %" PRIu64 " bytes, threads %d, checksum %s, codebook %s%s%s\n",
                input.path().c_str(), v.what.c_str(), v.n_elems, bytes, threads, checksum ? "on" : "off",
                has_codebook ? a.value("codebook")->c_str() : "dynamic", has_tables ? ", tables " : "",
                has_tables ? a.value("tables")->c_str() : "");
    std::printf("%-10s %-8s %10s %7s %8s %9s %16s %16s  %s\n", "backend", "mode", "frame", "frames", "ratio", "escape%",
                "encode GB/s", "decode GB/s", "round trip");
    std::printf("%-10s %-8s %10s %7s %8s %9s %9.2f (1.00x) %9.2f (1.00x)  -\n", "memcpy", "-", "-", "-", "-", "-", mgb,
                mgb);
    for (const Row& r : rows) {
      char fb[32];
      std::snprintf(fb, sizeof fb, "%" PRIu64, r.frame_bytes);
      if (!r.ok) {
        std::printf("%-10s %-8s %10s %7" PRIu64 " %8s %9s %16s %16s  FAILED: %s\n", r.backend.c_str(), mode_name(r.mode),
                    fb, r.frames, "-", "-", "-", "-", r.error.c_str());
        continue;
      }
      char es[16] = "-";
      if (r.mode == splitzip::Mode::fast) std::snprintf(es, sizeof es, "%.4f%%", 100.0 * erate(r));
      const double e = gb_per_s(bytes, r.enc_s), d = gb_per_s(bytes, r.dec_s);
      std::printf("%-10s %-8s %10s %7" PRIu64 " %8.4f %9s %9.2f (%.2fx) %9.2f (%.2fx)  ok\n", r.backend.c_str(),
                  mode_name(r.mode), fb, r.frames, ratio(r), es, e, mgb > 0 ? e / mgb : 0.0, d, mgb > 0 ? d / mgb : 0.0);
    }
  }
  return all_ok ? kExitOk : kExitMismatch;
}

}  // namespace szcli
