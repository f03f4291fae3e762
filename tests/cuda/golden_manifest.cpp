// SPDX-License-Identifier: Apache-2.0
#include "tests/cuda/golden_manifest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tests/support/compare.h"
#include "tests/support/e4m3_data.h"
#include "tests/support/synthetic.h"
#include "tests/support/test_data.h"

namespace splitzip::test {
namespace {

GpuGoldenCase make_case(const std::string& name, Dtype d, uint64_t n, uint32_t cl, const std::string& source,
                        const std::string& rule = "dynamic", bool checksum = false) {
  GpuGoldenCase c;
  c.name = name;
  c.dtype = d;
  c.n = n;
  c.chunk_log2 = cl;
  c.source = source;
  c.codebook_rule = rule;
  c.checksum = checksum;
  c.frame_file = name + ".szf";
  return c;
}

bool split(const std::string& s, char sep, std::vector<std::string>* out) {
  out->clear();
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      out->push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out->push_back(cur);
  return true;
}

bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtoull(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0';
}

// "<file>@<first>"
bool parse_data_ref(const std::string& s, std::string* file, uint64_t* first) {
  const size_t at = s.rfind('@');
  if (at == std::string::npos) return false;
  *file = s.substr(0, at);
  return !file->empty() && file->find('/') == std::string::npos && parse_u64(s.substr(at + 1), first);
}

}  // namespace

std::vector<GpuGoldenCase> gpu_golden_cases() {
  std::vector<GpuGoldenCase> v;
  // Real KV: bf16 as stored, fp32 from the float32 source, fp16 / fp8
  // converted from it; odd lengths so the last group and chunk are partial.
  v.push_back(make_case("real_bf16_l02k", Dtype::bf16, 70001, 10, "data:layer02_k.bf16@0"));
  v.push_back(make_case("real_bf16_l00v", Dtype::bf16, 65536, 10, "data:layer00_v.bf16@1000"));
  v.push_back(make_case("real_bf16_l04k_ck15", Dtype::bf16, 99999, 15, "data:layer04_k.bf16@12345"));
  v.push_back(make_case("real_fp32_l02v", Dtype::fp32, 40003, 10, "f32data:layer02_v.f32@0"));
  v.push_back(make_case("real_fp16_l02k", Dtype::fp16, 50001, 8, "f32data:layer02_k.f32@7"));
  v.push_back(make_case("real_fp8_l02k", Dtype::fp8_e5m2, 60007, 6, "f32data:layer02_k.f32@0"));
  v.push_back(make_case("real_bf16_checksum", Dtype::bf16, 33000, 10, "data:layer01_v.bf16@0", "dynamic", true));
  // Escape-rich: coded frames with many escapes, and the stored fallback.
  v.push_back(make_case("escapes_bf16_5pct", Dtype::bf16, 80000, 10, "synth:heavy_tail:11:0.05:0", "body"));
  v.push_back(make_case("escapes_fp32_10pct", Dtype::fp32, 40000, 12, "synth:heavy_tail:12:0.10:0", "body"));
  v.push_back(make_case("escapes_fp16_2pct", Dtype::fp16, 70000, 10, "synth:heavy_tail:13:0.02:0", "body"));
  v.push_back(make_case("escapes_fp8_2pct", Dtype::fp8_e5m2, 90000, 9, "synth:heavy_tail:14:0.02:0", "body"));
  v.push_back(make_case("escapes_bf16_k4", Dtype::bf16, 50000, 10, "data:layer03_k.bf16@0", "body:4"));
  v.push_back(make_case("all_escape_bf16", Dtype::bf16, 20000, 10, "synth:all_escape:15:0:0", "body"));
  v.push_back(make_case("special_fp16", Dtype::fp16, 30000, 10, "synth:special_values:16:0:0"));
  v.push_back(make_case("special_bf16", Dtype::bf16, 30000, 7, "synth:special_values:17:0:0"));
  v.push_back(make_case("shift_fp32", Dtype::fp32, 50000, 10, "synth:exponent_shift:18:0:8"));
  // Edge sizes around groups (16), chunks and tiles (32768).
  const uint64_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 65, 1023, 1025, 32767, 32768, 32769, 65537};
  for (uint64_t n : sizes) {
    v.push_back(make_case("edge_bf16_" + std::to_string(n), Dtype::bf16, n, 6, "synth:gaussian_kv:19:0:0"));
  }
  v.push_back(make_case("edge_fp8_33", Dtype::fp8_e5m2, 33, 6, "synth:gaussian_kv:20:0:0"));
  v.push_back(make_case("edge_fp16_1000", Dtype::fp16, 1000, 6, "synth:heavy_tail:21:0.01:0", "body"));
  v.push_back(make_case("edge_fp32_100", Dtype::fp32, 100, 6, "synth:gaussian_kv:22:0:0"));
  // fp8_e4m3 (FORMAT.md 4.7): real KV cast the vLLM way, KV-like bytes
  // with escapes around groups, tiles and checksum blocks, every byte value
  // (stored), a 3-entry codebook (escape-rich coded frame).
  v.push_back(make_case("e4m3_real_l02k", Dtype::fp8_e4m3, 60007, 10, "e4m3f32:layer02_k.f32@0"));
  v.push_back(make_case("e4m3_real_l02v_ck", Dtype::fp8_e4m3, 65536, 10, "e4m3f32:layer02_v.f32@5", "dynamic", true));
  v.push_back(make_case("e4m3_kv_k3", Dtype::fp8_e4m3, 40001, 10, "e4m3kv:41:1", "e4m3:768"));
  for (uint64_t n : {uint64_t{1}, uint64_t{9}, uint64_t{17}, uint64_t{1023}, uint64_t{32768}, uint64_t{65537},
                     uint64_t{3 * 32768 + 5}})
    v.push_back(make_case("e4m3_kv_" + std::to_string(n), Dtype::fp8_e4m3, n, 6, "e4m3kv:42:4", "dynamic", n % 2 == 1));
  v.push_back(make_case("e4m3_uniform_stored", Dtype::fp8_e4m3, 40000, 10, "e4m3bytes:43"));
  v.push_back(make_case("e4m3_uniform_stored_ck", Dtype::fp8_e4m3, 70000, 10, "e4m3bytes:44", "dynamic", true));
  v.push_back(make_case("e4m3_empty", Dtype::fp8_e4m3, 0, 10, "e4m3kv:45:4", "dynamic", true));
  v.push_back(make_case("e4m3_coded_plain", Dtype::fp8_e4m3, 50000, 10, "e4m3kv:46:2"));
  // Coverage (GpuGolden.ManifestCoversEveryDtypeModeAndSizeClass): every
  // dtype coded and stored, with and without the v2 checksum, and every
  // size class (empty, a partial group, one tile, several tiles).
  for (Dtype d : {Dtype::bf16, Dtype::fp16, Dtype::fp32, Dtype::fp8_e5m2}) {
    const std::string dn = dtype_name(d);
    v.push_back(make_case("cov_" + dn + "_coded_ck", d, 70001, 10, "synth:gaussian_kv:30:0:0", "dynamic", true));
    v.push_back(make_case("cov_" + dn + "_stored", d, 40000, 10, "synth:random_bits:31:0:0", "dynamic", false));
    v.push_back(make_case("cov_" + dn + "_stored_ck", d, 40000, 10, "synth:random_bits:32:0:0", "dynamic", true));
    v.push_back(make_case("cov_" + dn + "_empty", d, 0, 10, "synth:gaussian_kv:33:0:0", "dynamic", true));
    v.push_back(make_case("cov_" + dn + "_5", d, 5, 6, "synth:gaussian_kv:34:0:0"));
  }
  return v;
}

std::vector<uint8_t> gpu_golden_input(const GpuGoldenCase& c, std::string* error) {
  const uint64_t bytes_per = dtype_bytes(c.dtype);
  std::vector<uint8_t> none;
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = c.name + ": " + why;
    return none;
  };
  if (bytes_per == 0) return fail("bad dtype");
  if (c.source.rfind("data:", 0) == 0 || c.source.rfind("f32data:", 0) == 0) {
    const bool f32 = c.source[0] == 'f';
    std::string file;
    uint64_t first = 0;
    if (!parse_data_ref(c.source.substr(f32 ? 8 : 5), &file, &first)) return fail("bad data source");
    bool ok = false;
    const std::vector<uint8_t> raw = load_data_file(file, &ok);
    if (!ok) return fail("cannot read data file " + file);
    const uint64_t src_bytes = f32 ? 4 : bytes_per;
    if (first > raw.size() / src_bytes || c.n > raw.size() / src_bytes - first)
      return fail("range past the end of " + file);
    if (!f32) return std::vector<uint8_t>(raw.begin() + first * src_bytes, raw.begin() + (first + c.n) * src_bytes);
    std::vector<float> f(c.n);
    if (c.n) std::memcpy(f.data(), raw.data() + first * 4, c.n * 4);
    std::vector<uint8_t> out(c.n * bytes_per);
    synth::convert_f32(f.data(), c.n, c.dtype, out.data());
    return out;
  }
  if (c.source.rfind("e4m3", 0) == 0) {  // fp8_e4m3 inputs (tests/support/e4m3_data.h)
    if (c.dtype != Dtype::fp8_e4m3) return fail("e4m3 source for another dtype");
    std::vector<std::string> parts;
    split(c.source, ':', &parts);
    uint64_t a = 0, b = 0;
    if (parts[0] == "e4m3kv" && parts.size() == 3 && parse_u64(parts[1], &a) && parse_u64(parts[2], &b) && b <= 100)
      return e4m3_kv_bytes(c.n, a, static_cast<uint32_t>(b));
    if (parts[0] == "e4m3bytes" && parts.size() == 2 && parse_u64(parts[1], &a)) return e4m3_uniform_bytes(c.n, a);
    std::string file;
    if (parts[0] == "e4m3f32" && parts.size() == 2 && parse_data_ref(parts[1], &file, &a)) {
      bool ok = false;
      const std::vector<uint8_t> raw = load_data_file(file, &ok);
      if (!ok) return fail("cannot read data file " + file);
      if (a > raw.size() / 4 || c.n > raw.size() / 4 - a) return fail("range past the end of " + file);
      std::vector<float> f(c.n);
      if (c.n) std::memcpy(f.data(), raw.data() + a * 4, c.n * 4);
      return e4m3_scaled(f.data(), c.n);  // scale amax/448 over the case's range
    }
    return fail("bad e4m3 source");
  }
  if (c.source.rfind("synth:", 0) == 0) {
    std::vector<std::string> parts;
    split(c.source, ':', &parts);
    synth::Generator g;
    uint64_t seed = 0;
    if (parts.size() != 5 || !synth::parse_generator(parts[1].c_str(), &g) || !parse_u64(parts[2], &seed))
      return fail("bad synth source");
    synth::Params p;
    p.escape_rate = std::strtod(parts[3].c_str(), nullptr);
    p.shift = std::atoi(parts[4].c_str());
    if (c.n == 0) return {};
    std::vector<uint8_t> out = synth::generate(g, c.dtype, c.n, seed, p);
    if (out.size() != c.n * bytes_per) return fail("generator failed");
    return out;
  }
  return fail("unknown source " + c.source);
}

bool resolve_codebook(GpuGoldenCase* c, const std::vector<uint8_t>& input, std::string* error) {
  Codebook cb;
  if (c->codebook_rule == "dynamic") {
    Histogram h(c->dtype);
    h.add(input.data(), c->n);
    cb = h.codebook();
    if (cb.count == 0) {  // empty input: the codebook is not used (stored frame)
      cb.dtype = c->dtype;
      cb.count = 1;
    }
  } else if (c->codebook_rule.rfind("e4m3:", 0) == 0) {
    // fp8_e4m3: one decimal digit per entry, exponents 0..9 ("e4m3:768" =
    // {7, 6, 8}).
    cb.dtype = Dtype::fp8_e4m3;
    const std::string e = c->codebook_rule.substr(5);
    cb.count = static_cast<uint8_t>(e.size());
    for (size_t i = 0; i < e.size() && i < 16; ++i) cb.entries[i] = static_cast<uint8_t>(e[i] - '0');
  } else if (c->codebook_rule.rfind("body", 0) == 0) {
    cb = synth::body_codebook(c->dtype);
    if (c->codebook_rule.size() > 5) {
      const int k = std::atoi(c->codebook_rule.c_str() + 5);
      if (k < 1 || k > cb.count) {
        if (error) *error = c->name + ": bad codebook rule";
        return false;
      }
      cb.count = static_cast<uint8_t>(k);
      for (int i = k; i < 16; ++i) cb.entries[i] = 0;
    }
  } else {
    if (error) *error = c->name + ": unknown codebook rule";
    return false;
  }
  if (validate_codebook(cb) != Status::ok) {
    if (error) *error = c->name + ": invalid codebook";
    return false;
  }
  c->codebook = cb;
  return true;
}

std::string manifest_line(const GpuGoldenCase& c) {
  char hex[40];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", c.codebook.entries[i]);
  std::ostringstream os;
  os << c.name << ' ' << dtype_name(c.dtype) << ' ' << c.n << ' ' << c.chunk_log2 << ' ' << (c.checksum ? 1 : 0)
     << ' ' << hex << ':' << int(c.codebook.count) << ' ' << c.source << ' ' << c.frame_file;
  return os.str();
}

bool parse_manifest(const std::string& text, std::vector<GpuGoldenCase>* out, std::string* error) {
  out->clear();
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    GpuGoldenCase c;
    std::string dtype, cb, checksum, n, cl;
    if (!(ls >> c.name >> dtype >> n >> cl >> checksum >> cb >> c.source >> c.frame_file)) {
      if (error) *error = "line " + std::to_string(lineno) + ": expected 8 fields";
      return false;
    }
    uint64_t nv = 0, clv = 0;
    const size_t colon = cb.find(':');
    if (!parse_dtype(dtype.c_str(), &c.dtype) || !parse_u64(n, &nv) || !parse_u64(cl, &clv) ||
        (checksum != "0" && checksum != "1") || colon != 32 || c.frame_file.find('/') != std::string::npos) {
      if (error) *error = "line " + std::to_string(lineno) + ": bad field";
      return false;
    }
    c.n = nv;
    c.chunk_log2 = static_cast<uint32_t>(clv);
    c.checksum = checksum == "1";
    c.codebook.dtype = c.dtype;
    for (int i = 0; i < 16; ++i)
      c.codebook.entries[i] = static_cast<uint8_t>(std::strtoul(cb.substr(2 * i, 2).c_str(), nullptr, 16));
    uint64_t count = 0;
    if (!parse_u64(cb.substr(33), &count) || count > 16) {
      if (error) *error = "line " + std::to_string(lineno) + ": bad codebook count";
      return false;
    }
    c.codebook.count = static_cast<uint8_t>(count);
    out->push_back(c);
  }
  return true;
}

bool verify_gpu_golden(const std::string& dir, uint64_t* verified, std::vector<std::string>* failures) {
  *verified = 0;
  failures->clear();
  bool ok = false;
  const std::vector<uint8_t> text = read_file(dir + "/MANIFEST.txt", &ok);
  if (!ok) return false;
  std::vector<GpuGoldenCase> cases;
  std::string err;
  if (!parse_manifest(std::string(text.begin(), text.end()), &cases, &err)) {
    failures->push_back("MANIFEST.txt: " + err);
    return true;
  }
  for (const GpuGoldenCase& c : cases) {
    const std::vector<uint8_t> input = gpu_golden_input(c, &err);
    if (input.size() != c.n * dtype_bytes(c.dtype)) {
      failures->push_back(err.empty() ? c.name + ": input size" : err);
      continue;
    }
    bool read_ok = false;
    const std::vector<uint8_t> frame = read_file(dir + "/" + c.frame_file, &read_ok);
    if (!read_ok) {
      failures->push_back(c.name + ": cannot read " + c.frame_file);
      continue;
    }
    std::vector<uint8_t> want(compress_bound(c.dtype, c.n));
    CompressOptions o;
    o.backend = "reference";
    o.codebook = &c.codebook;
    o.chunk_log2 = c.chunk_log2;
    o.checksum = c.checksum;
    const Result r = compress(c.dtype, input.data(), c.n, want.data(), want.size(), o);
    if (r.status != Status::ok) {
      failures->push_back(c.name + ": reference compress " + status_name(r.status));
      continue;
    }
    want.resize(r.size);
    const auto eq = bytes_equal(frame, want);
    if (!eq) {
      failures->push_back(c.name + ": GPU frame differs from the CPU reference: " + eq.message());
      continue;
    }
    ++*verified;
  }
  return true;
}

}  // namespace splitzip::test
