// SPDX-License-Identifier: Apache-2.0
// splitzip bench: encode/decode throughput per backend on one file, next to
// memcpy of the same buffer.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tools/cli/commands.h"
#include "tools/cli/errors.h"
#include "tools/cli/json_strict.h"
#include "tools/cli/timing.h"

namespace szcli {

namespace {

const char kUsage[] =
    "usage: splitzip bench [options] FILE\n"
    "  Encode and decode throughput in GB/s (1e9 bytes/s of uncompressed data;\n"
    "  median of repeated runs) per backend, with memcpy of the same buffer as\n"
    "  the reference line; also ratio and escape rate. Checks each round trip.\n"
    "  --dtype/--format/--tensor   how to read FILE (as for compress)\n"
    "  --backend B|all  one backend, or every available one (default: all)\n"
    "  -T, --threads N  worker threads (default: backend's choice)\n"
    "  --seconds S      time spent per measurement (default 1)\n"
    "  --checksum       include the XXH3 block checksums (default: off, to\n"
    "                   time the codec alone; compare the two to see its cost)\n"
    "  --chunk-log2 N   chunk size 2^N (default 10)\n"
    "  --json           one JSON object instead of the table\n";

struct Row {
  std::string backend;
  bool ok = false;
  std::string error;
  uint64_t compressed = 0, escapes = 0;
  double enc_s = 0, dec_s = 0;
};

}  // namespace

int cmd_bench(int argc, char** argv) {
  std::vector<OptSpec> specs = input_option_specs();
  specs.insert(specs.end(), {{"backend", 0, true},
                             {"threads", 'T', true},
                             {"seconds", 0, true},
                             {"checksum", 0, false},
                             {"chunk-log2", 0, true},
                             {"json", 0, false},
                             {"help", 'h', false}});
  Args a("bench", specs, argc, argv, 2);
  if (handle_help(a, kUsage)) return kExitOk;
  if (a.positional().size() != 1) fail(kExitUsage, "bench: expected one input file (see --help)");
  const double secs = a.seconds("seconds", 1.0);
  const int threads = threads_option(a);
  const uint64_t chunk_log2 = a.u64("chunk-log2", splitzip::kDefaultChunkLog2);
  if (chunk_log2 < splitzip::kMinChunkLog2 || chunk_log2 > splitzip::kMaxChunkLog2)
    fail(kExitUsage, "bench: --chunk-log2 must be in 6..15");

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
  const uint64_t cap = splitzip::compress_bound(v.dtype, v.n_elems);
  std::unique_ptr<uint8_t[]> enc(new uint8_t[cap]);
  std::unique_ptr<uint8_t[]> dec(new uint8_t[bytes ? bytes : 1]);
  // Fault the pages in before timing anything.
  std::memset(enc.get(), 0, cap);
  std::memset(dec.get(), 0, bytes ? bytes : 1);

  const double memcpy_s = median_seconds([&] { std::memcpy(dec.get(), v.data, bytes); }, secs);

  std::vector<Row> rows;
  bool all_ok = true;
  for (const std::string& b : backends) {
    Row row;
    row.backend = b;
    splitzip::CompressOptions co;
    co.backend = b.c_str();
    co.threads = threads;
    co.checksum = a.has("checksum");
    co.chunk_log2 = static_cast<uint32_t>(chunk_log2);
    splitzip::DecompressOptions dopt;
    dopt.backend = b.c_str();
    dopt.threads = threads;
    splitzip::Result r = splitzip::compress(v.dtype, v.data, v.n_elems, enc.get(), cap, co);
    if (!r.ok()) {
      row.error = status_text(r.status);
      if (which != "all") check_status(r.status, "bench: backend " + b);
      rows.push_back(row);
      all_ok = false;
      continue;
    }
    row.compressed = r.size;
    splitzip::FrameInfo fi;
    if (splitzip::frame_info(enc.get(), r.size, &fi) == splitzip::Status::ok) row.escapes = fi.escape_count;
    const splitzip::Result d = splitzip::decompress(enc.get(), r.size, dec.get(), bytes, dopt);
    row.ok = d.ok() && d.size == bytes && std::memcmp(dec.get(), v.data, bytes) == 0;
    if (!row.ok) {
      row.error = d.ok() ? "round trip differs" : status_text(d.status);
      rows.push_back(row);
      all_ok = false;
      continue;
    }
    row.enc_s = median_seconds([&] { splitzip::compress(v.dtype, v.data, v.n_elems, enc.get(), cap, co); }, secs);
    row.dec_s = median_seconds([&] { splitzip::decompress(enc.get(), r.size, dec.get(), bytes, dopt); }, secs);
    rows.push_back(row);
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
    j["checksum"] = a.has("checksum");
    j["memcpy_gbps"] = mgb;
    Json results = Json::array();
    for (const Row& r : rows) {
      Json rj = Json::object();
      rj["backend"] = r.backend;
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
    std::printf("%s: %s, %" PRIu64 " elements, %" PRIu64 " bytes, threads %d, checksum %s\n", input.path().c_str(),
                v.what.c_str(), v.n_elems, bytes, threads, a.has("checksum") ? "on" : "off");
    std::printf("%-10s %8s %9s %16s %16s  %s\n", "backend", "ratio", "escape%", "encode GB/s", "decode GB/s",
                "round trip");
    std::printf("%-10s %8s %9s %9.2f (1.00x) %9.2f (1.00x)  -\n", "memcpy", "-", "-", mgb, mgb);
    for (const Row& r : rows) {
      if (!r.ok) {
        std::printf("%-10s %8s %9s %16s %16s  FAILED: %s\n", r.backend.c_str(), "-", "-", "-", "-", r.error.c_str());
        continue;
      }
      const double e = gb_per_s(bytes, r.enc_s), d = gb_per_s(bytes, r.dec_s);
      std::printf("%-10s %8.4f %8.4f%% %9.2f (%.2fx) %9.2f (%.2fx)  ok\n", r.backend.c_str(), ratio(r),
                  100.0 * erate(r), e, mgb > 0 ? e / mgb : 0.0, d, mgb > 0 ? d / mgb : 0.0);
    }
  }
  return all_ok ? kExitOk : kExitMismatch;
}

}  // namespace szcli
