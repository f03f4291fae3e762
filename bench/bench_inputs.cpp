// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "bench/bench_buffers.h"

namespace splitzip_bench {
namespace {

bool file_size(const std::string& path, uint64_t* size) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  *size = static_cast<uint64_t>(st.st_size);
  return true;
}

// An input made of files under the data dir; skipped (with a message) when
// one is missing. f32 sources hold 4 bytes per element whatever the dtype.
void add_file_input(const Config& cfg, const std::string& name, splitzip::Dtype dtype,
                    Source source, const std::vector<std::string>& files, bool variants,
                    std::vector<InputSpec>* out) {
  if (!cfg.want_input(name)) return;
  InputSpec in;
  in.name = name;
  in.dtype = dtype;
  in.source = source;
  in.variants = variants;
  uint64_t total = 0;
  for (const std::string& f : files) {
    std::string path = cfg.data_dir + "/" + f;
    uint64_t size = 0;
    if (!file_size(path, &size)) {
      std::fprintf(stderr, "bench: %s not found, input %s skipped\n", path.c_str(), name.c_str());
      return;
    }
    total += size;
    in.files.push_back(path);
  }
  in.n_elems = total / (source == Source::f32_files ? 4 : splitzip::dtype_bytes(dtype));
  out->push_back(in);
}

bool read_files(const InputSpec& in, uint8_t* dst, uint64_t capacity, std::string* error) {
  uint64_t at = 0;
  for (const std::string& path : in.files) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
      *error = "cannot open " + path;
      return false;
    }
    uint64_t size = 0;
    bool ok = file_size(path, &size) && at + size <= capacity &&
              std::fread(dst + at, 1, static_cast<size_t>(size), f) == size;
    std::fclose(f);
    if (!ok) {
      *error = "cannot read " + path + " (changed size?)";
      return false;
    }
    at += size;
  }
  if (at != capacity) {
    *error = "input " + in.name + " changed size on disk";
    return false;
  }
  return true;
}

bool read_f32_converted(const InputSpec& in, uint8_t* dst, std::string* error) {
  std::vector<float> f32(static_cast<size_t>(in.n_elems));
  if (!read_files(in, reinterpret_cast<uint8_t*>(f32.data()), in.n_elems * 4, error)) return false;
  splitzip::synth::convert_f32(f32.data(), in.n_elems, in.dtype, dst);
  return true;
}

// 256M elements take seconds on one core: generate in slices, one per core
// (the generator is counter-based, so slices are independent).
bool generate_synth(const InputSpec& in, uint8_t* dst, std::string* error) {
  unsigned hc = std::thread::hardware_concurrency();
  uint64_t parts = hc == 0 ? 1 : hc;
  uint64_t per = (in.n_elems + parts - 1) / parts;
  std::vector<splitzip::Status> status(static_cast<size_t>(parts), splitzip::Status::ok);
  std::vector<std::thread> pool;
  for (uint64_t p = 0; p < parts; ++p) {
    uint64_t first = p * per;
    if (first >= in.n_elems) break;
    uint64_t count = std::min(per, in.n_elems - first);
    pool.emplace_back([&in, &status, dst, p, first, count] {
      status[static_cast<size_t>(p)] = splitzip::synth::generate_range(
          in.generator, in.dtype, in.n_elems, in.seed, in.params, first, count,
          dst + first * splitzip::dtype_bytes(in.dtype));
    });
  }
  for (std::thread& t : pool) t.join();
  for (splitzip::Status s : status) {
    if (s != splitzip::Status::ok) {
      *error = std::string("synthetic generator: ") + splitzip::status_name(s);
      return false;
    }
  }
  return true;
}

void add_synth(const Config& cfg, const std::string& name, uint64_t n,
               splitzip::synth::Generator g, double escape_rate, bool variants,
               std::vector<InputSpec>* out) {
  if (n == 0 || !cfg.want_input(name)) return;
  InputSpec in;
  in.name = name;
  in.dtype = splitzip::Dtype::bf16;
  in.n_elems = n;
  in.source = Source::synthetic;
  in.generator = g;
  in.params.escape_rate = escape_rate;
  in.variants = variants;
  out->push_back(in);
}

}  // namespace

std::vector<InputSpec> list_inputs(const Config& cfg) {
  using splitzip::Dtype;
  std::vector<InputSpec> out;
  std::vector<std::string> l14;
  for (int layer = 1; layer <= 4; ++layer) {
    char k[32], v[32];
    std::snprintf(k, sizeof k, "layer%02d_k.bf16", layer);
    std::snprintf(v, sizeof v, "layer%02d_v.bf16", layer);
    l14.push_back(k);
    l14.push_back(v);
  }
  const std::vector<std::string> l2f32 = {"layer02_k.f32", "layer02_v.f32"};
  add_file_input(cfg, "kv_l1-4", Dtype::bf16, Source::files, l14, true, &out);
  add_file_input(cfg, "kv_l0k", Dtype::bf16, Source::files, {"layer00_k.bf16"}, false, &out);
  add_file_input(cfg, "kv_l0v", Dtype::bf16, Source::files, {"layer00_v.bf16"}, false, &out);
  add_file_input(cfg, "kv_l2-f32", Dtype::fp32, Source::files, l2f32, false, &out);
  add_file_input(cfg, "kv_l2-fp16", Dtype::fp16, Source::f32_files, l2f32, false, &out);
  add_file_input(cfg, "kv_l2-fp8", Dtype::fp8_e5m2, Source::f32_files, l2f32, false, &out);
  add_synth(cfg, "synth-esc1", cfg.synth_esc_elems, splitzip::synth::Generator::heavy_tail, 0.01,
            false, &out);
  // Last: the 512 MB buffer is generated only when the small inputs are done.
  add_synth(cfg, "synth", cfg.synth_elems, splitzip::synth::Generator::gaussian_kv, 0.0, true,
            &out);
  return out;
}

const uint8_t* input_data(const InputSpec& in, std::string* error) {
  static std::map<std::string, Buffer> loaded;
  auto it = loaded.find(in.name);
  if (it != loaded.end()) return it->second.data();
  Buffer buf(in.bytes());
  if (buf.empty()) {
    *error = "out of memory for input " + in.name;
    return nullptr;
  }
  bool ok = false;
  switch (in.source) {
    case Source::files: ok = read_files(in, buf.data(), in.bytes(), error); break;
    case Source::f32_files: ok = read_f32_converted(in, buf.data(), error); break;
    case Source::synthetic: ok = generate_synth(in, buf.data(), error); break;
  }
  if (!ok) return nullptr;
  uint8_t* p = buf.data();
  loaded.emplace(in.name, std::move(buf));
  return p;
}

}  // namespace splitzip_bench
