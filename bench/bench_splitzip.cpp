// SPDX-License-Identifier: Apache-2.0
// splitzip encode/decode benchmarks, one per backend x input x thread count.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "bench/bench_buffers.h"
#include "bench/bench_register.h"
#include "splitzip/splitzip.hpp"

namespace splitzip_bench {
namespace {

enum class Op { encode, decode, encode_checksum, decode_checksum, encode_dynamic };

const char* op_name(Op op) {
  switch (op) {
    case Op::encode: return "BM_Encode";
    case Op::decode: return "BM_Decode";
    case Op::encode_checksum: return "BM_EncodeChecksum";
    case Op::decode_checksum: return "BM_DecodeChecksum";
    case Op::encode_dynamic: return "BM_EncodeDynamic";
  }
  return "?";
}

bool op_checksum(Op op) { return op == Op::encode_checksum || op == Op::decode_checksum; }

// The offline codebook: top-16 of the input's own histogram, computed once
// and outside the timed loop (BM_EncodeDynamic times the in-call version).
const splitzip::Codebook* codebook_for(const InputSpec& in, const uint8_t* data) {
  static std::map<std::string, splitzip::Codebook> books;
  auto it = books.find(in.name);
  if (it == books.end()) {
    splitzip::Histogram h(in.dtype);
    h.add(data, in.n_elems);
    it = books.emplace(in.name, h.codebook()).first;
  }
  return &it->second;
}

std::string frame_key(const std::string& backend, const InputSpec& in, bool checksum) {
  return "splitzip|" + backend + "|" + in.name + (checksum ? "|ck" : "");
}

void set_counters(benchmark::State& st, const InputSpec& in, const splitzip::FrameInfo& fi,
                  int threads) {
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(in.bytes()));
  st.counters["ratio"] = static_cast<double>(in.bytes()) / static_cast<double>(fi.frame_size);
  st.counters["escape_rate"] =
      in.n_elems ? static_cast<double>(fi.escape_count) / static_cast<double>(in.n_elems) : 0.0;
  st.counters["threads"] = threads;
  st.counters["stored"] = fi.stored ? 1 : 0;
}

bool fail(benchmark::State& st, const std::string& what) {
  st.SkipWithError(what.c_str());
  return false;
}

bool fail(benchmark::State& st, const char* what, splitzip::Status s) {
  return fail(st, std::string(what) + ": " + splitzip::status_name(s));
}

// Compresses `in` untimed into the encode scratch; the frame and its info
// come back through the out parameters.
bool encode_once(benchmark::State& st, const InputSpec& in, const uint8_t* src,
                 const splitzip::CompressOptions& o, uint8_t** frame, uint64_t* size) {
  uint64_t cap = splitzip::compress_bound(in.dtype, in.n_elems);
  uint8_t* dst = scratch(Slot::encode_out, cap);
  if (!dst) return fail(st, "out of memory");
  splitzip::Result r = splitzip::compress(in.dtype, src, in.n_elems, dst, cap, o);
  if (!r.ok()) return fail(st, "compress", r.status);
  if (!r.backend || std::strcmp(r.backend, o.backend) != 0) {
    return fail(st, std::string("dispatch ran ") + (r.backend ? r.backend : "null") +
                        " instead of " + o.backend);
  }
  *frame = dst;
  *size = r.size;
  return true;
}

void run_encode(benchmark::State& st, const InputSpec& in, const std::string& backend, Op op,
                int threads) {
  std::string err;
  const uint8_t* src = input_data(in, &err);
  if (!src) {
    fail(st, err);
    return;
  }
  splitzip::CompressOptions o;
  o.codebook = op == Op::encode_dynamic ? nullptr : codebook_for(in, src);
  o.backend = backend.c_str();
  o.threads = threads;
  o.checksum = op_checksum(op);
  uint8_t* dst = nullptr;
  uint64_t size = 0;
  if (!encode_once(st, in, src, o, &dst, &size)) return;  // also the warm-up
  splitzip::FrameInfo fi;
  splitzip::Status s = splitzip::frame_info(dst, size, &fi);
  if (s != splitzip::Status::ok) {
    fail(st, "frame_info", s);
    return;
  }
  if (op != Op::encode_dynamic) store_frame(frame_key(backend, in, o.checksum), dst, size);
  uint64_t cap = splitzip::compress_bound(in.dtype, in.n_elems);
  for (auto _ : st) {
    splitzip::Result r = splitzip::compress(in.dtype, src, in.n_elems, dst, cap, o);
    if (!r.ok()) {
      fail(st, "compress", r.status);
      break;
    }
    if (r.size != size) {
      fail(st, "frame size changed between calls");
      break;
    }
    benchmark::ClobberMemory();
  }
  set_counters(st, in, fi, threads);
}

void run_decode(benchmark::State& st, const InputSpec& in, const std::string& backend, Op op,
                int threads) {
  std::string err;
  const uint8_t* src = input_data(in, &err);
  if (!src) {
    fail(st, err);
    return;
  }
  bool checksum = op_checksum(op);
  std::string key = frame_key(backend, in, checksum);
  uint64_t size = 0;
  const uint8_t* frame = cached_frame(key, &size);
  if (!frame) {  // the encode benchmark was filtered out: make the frame here
    splitzip::CompressOptions o;
    o.codebook = codebook_for(in, src);
    o.backend = backend.c_str();
    o.checksum = checksum;
    uint8_t* f = nullptr;
    if (!encode_once(st, in, src, o, &f, &size)) return;
    if (!store_frame(key, f, size)) {
      fail(st, "out of memory");
      return;
    }
    frame = cached_frame(key, &size);
  }
  splitzip::FrameInfo fi;
  splitzip::Status s = splitzip::frame_info(frame, size, &fi);
  if (s != splitzip::Status::ok) {
    fail(st, "frame_info", s);
    return;
  }
  uint8_t* out = scratch(Slot::decode_out, in.bytes());
  if (!out) {
    fail(st, "out of memory");
    return;
  }
  splitzip::DecompressOptions o;
  o.backend = backend.c_str();
  o.threads = threads;
  o.verify_checksum = checksum;
  // Untimed: warm-up, plus the round-trip check of this backend's own frame.
  std::memset(out, 0xA5, static_cast<size_t>(in.bytes()));
  splitzip::Result r = splitzip::decompress(frame, size, out, in.bytes(), o);
  if (!r.ok()) {
    fail(st, "decompress", r.status);
    return;
  }
  if (r.size != in.bytes() || std::memcmp(out, src, static_cast<size_t>(in.bytes())) != 0) {
    fail(st, "round trip differs from the input");
    return;
  }
  for (auto _ : st) {
    r = splitzip::decompress(frame, size, out, in.bytes(), o);
    if (!r.ok()) {
      fail(st, "decompress", r.status);
      break;
    }
    benchmark::ClobberMemory();
  }
  set_counters(st, in, fi, threads);
}

void add(const Config&, const std::string& backend, const InputSpec& in, Op op, int threads) {
  std::string name = std::string(op_name(op)) + "/" + backend + "/" +
                     splitzip::dtype_name(in.dtype) + "/" + bench_suffix(in, threads);
  bool decode = op == Op::decode || op == Op::decode_checksum;
  benchmark::RegisterBenchmark(name.c_str(), [in, backend, op, threads, decode](benchmark::State& st) {
    if (decode) {
      run_decode(st, in, backend, op, threads);
    } else {
      run_encode(st, in, backend, op, threads);
    }
  })->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

std::string bench_suffix(const InputSpec& in, int threads) {
  return std::to_string(in.bytes()) + "/" + in.name + "/threads:" + std::to_string(threads);
}

std::vector<std::string> selected_backends(const Config& cfg) {
  std::vector<std::string> out;
  for (size_t i = 0; i < splitzip::backend_count(); ++i) {
    const char* name = splitzip::backend_name(i);
    if (!name || !cfg.want_backend(name)) continue;
    if (!splitzip::backend_available(name)) {
      std::fprintf(stderr, "bench: backend %s is registered but not available here, skipped\n", name);
      continue;
    }
    out.push_back(name);
  }
  for (const std::string& want : cfg.backends) {
    bool known = false;
    for (size_t i = 0; i < splitzip::backend_count(); ++i) {
      known = known || want == splitzip::backend_name(i);
    }
    if (!known) std::fprintf(stderr, "bench: backend %s is not compiled in, skipped\n", want.c_str());
  }
  return out;
}

void register_splitzip(const Config& cfg, const std::vector<std::string>& backends,
                       const InputSpec& in) {
  // Encodes before decodes of the same backend, so each decode finds the
  // frame its encode left in the cache.
  for (const std::string& b : backends) {
    for (Op op : {Op::encode, Op::decode, Op::encode_checksum, Op::decode_checksum,
                  Op::encode_dynamic}) {
      if (!in.variants && op != Op::encode && op != Op::decode) continue;
      for (int t : cfg.threads) add(cfg, b, in, op, t);
    }
  }
}

}  // namespace splitzip_bench
