// SPDX-License-Identifier: Apache-2.0
#include "tests/support/test_data.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/support/synthetic.h"

namespace splitzip::test {

namespace {
std::string env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return v != nullptr && v[0] != '\0' ? std::string(v) : std::string(fallback);
}
}  // namespace

std::string data_dir() { return env_or("SPLITZIP_DATA_DIR", SPLITZIP_DEFAULT_DATA_DIR); }
std::string golden_dir() { return env_or("SPLITZIP_GOLDEN_DIR", SPLITZIP_DEFAULT_GOLDEN_DIR); }

std::vector<uint8_t> read_file(const std::string& path, bool* ok) {
  std::vector<uint8_t> out;
  if (ok != nullptr) *ok = false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  uint8_t buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + got);
  const bool err = std::ferror(f) != 0;
  std::fclose(f);
  if (err) {
    out.clear();
    return out;
  }
  if (ok != nullptr) *ok = true;
  return out;
}

bool write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool wrote = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && wrote;
}

std::vector<uint8_t> load_data_file(const std::string& name, bool* ok) {
  return read_file(data_dir() + "/" + name, ok);
}

std::vector<std::string> bf16_data_files() {
  std::vector<std::string> out;
  for (int layer = 0; layer <= 4; ++layer)
    for (const char* kv : {"k", "v"}) {
      char name[64];
      std::snprintf(name, sizeof name, "layer%02d_%s.bf16", layer, kv);
      out.emplace_back(name);
    }
  return out;
}

std::vector<std::string> f32_data_files() { return {"layer02_k.f32", "layer02_v.f32"}; }

std::vector<RealInput> real_inputs(Dtype dtype) {
  std::vector<RealInput> out;
  if (dtype == Dtype::bf16) {
    for (const auto& name : bf16_data_files()) {
      bool ok = false;
      auto bytes = load_data_file(name, &ok);
      if (!ok) continue;
      const uint64_t n = bytes.size() / 2;
      out.push_back({name, dtype, n, std::move(bytes)});
    }
    return out;
  }
  for (const auto& name : f32_data_files()) {
    bool ok = false;
    const auto raw = load_data_file(name, &ok);
    if (!ok) continue;
    const uint64_t n = raw.size() / 4;
    std::vector<float> f(n);
    if (n > 0) std::memcpy(f.data(), raw.data(), n * 4);
    std::vector<uint8_t> bytes(n * dtype_bytes(dtype));
    synth::convert_f32(f.data(), n, dtype, bytes.data());
    out.push_back({name + "->" + dtype_name(dtype), dtype, n, std::move(bytes)});
  }
  return out;
}

uint64_t expected_content_checksum(const void* data, uint64_t bytes, std::vector<uint32_t>* checks) {
  const auto* p = static_cast<const uint8_t*>(data);
  std::vector<uint8_t> le;
  if (checks) checks->clear();
  for (uint64_t off = 0; off < bytes; off += 65536) {
    const uint64_t len = bytes - off < 65536 ? bytes - off : 65536;
    const uint64_t h = XXH3_64bits(p + off, static_cast<size_t>(len));
    if (checks) checks->push_back(static_cast<uint32_t>(h));
    for (int i = 0; i < 8; ++i) le.push_back(static_cast<uint8_t>(h >> (8 * i)));
  }
  return XXH3_64bits(le.data(), le.size());
}

}  // namespace splitzip::test
