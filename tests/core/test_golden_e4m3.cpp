// SPDX-License-Identifier: Apache-2.0
// Golden vectors of format v2's additions: fp8_e4m3 (FORMAT.md 4.7) and the
// tensor descriptor (4.8). Inputs are built here from a fixed LCG; the
// expected frames are tests/golden/e4m3/NAME.sz, written once by the
// reference (SPLITZIP_REGEN_GOLDEN=1 rewrites them). Every backend must
// write these bytes and decode them back to the input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "splitzip/splitzip.hpp"

namespace sz = splitzip;

namespace {

struct Lcg {
  uint64_t s;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
};

// KV-like E4M3 bytes: exponent 7 +- a few, occasional far exponents.
std::vector<uint8_t> kv_e4m3(size_t n, uint64_t seed) {
  Lcg g{seed};
  std::vector<uint8_t> v(n);
  for (auto& x : v) {
    const uint32_t r = g.next();
    uint32_t e = 7;
    const uint32_t u = r % 100;
    if (u < 30) e = 6;
    else if (u < 55) e = 8;
    else if (u < 70) e = 5;
    else if (u < 80) e = 9;
    else if (u < 87) e = 4;
    else if (u < 92) e = 10;
    else if (u < 97) e = 3;
    else e = (r >> 8) & 15;
    x = static_cast<uint8_t>(((r >> 12) & 0x80u) | (e << 3) | ((r >> 16) & 7u));
  }
  return v;
}

struct Case {
  std::string name;
  sz::Dtype dtype;
  std::vector<uint8_t> input;
  bool checksum;
  sz::Codebook cb;
  bool use_cb = false;
  sz::TensorDesc tensor{};
  bool use_tensor = false;
  std::string name_bytes{}, container{};
};

std::vector<Case> cases() {
  std::vector<Case> out;
  {
    Case c{"e4m3_all_bytes", sz::Dtype::fp8_e4m3, {}, true, {}};
    for (int rep = 0; rep < 4; ++rep)
      for (int b = 0; b < 256; ++b) c.input.push_back(static_cast<uint8_t>(b));
    const auto kv = kv_e4m3(4000, 1);
    c.input.insert(c.input.end(), kv.begin(), kv.end());
    out.push_back(c);
  }
  out.push_back({"e4m3_kv_10001", sz::Dtype::fp8_e4m3, kv_e4m3(10001, 2), false, {}});
  out.push_back({"e4m3_kv_70000_checksum", sz::Dtype::fp8_e4m3, kv_e4m3(70000, 3), true, {}});
  {
    Case c{"e4m3_uniform_stored", sz::Dtype::fp8_e4m3, {}, false, {}};
    Lcg g{4};
    for (int i = 0; i < 3000; ++i) c.input.push_back(static_cast<uint8_t>(g.next()));
    out.push_back(c);
  }
  {
    Case c{"e4m3_codebook3", sz::Dtype::fp8_e4m3, kv_e4m3(777, 5), true, {}};
    c.use_cb = true;
    c.cb.dtype = sz::Dtype::fp8_e4m3;
    c.cb.count = 3;
    c.cb.entries[0] = 7;
    c.cb.entries[1] = 6;
    c.cb.entries[2] = 8;
    out.push_back(c);
  }
  {
    Case c{"tensor_e4m3_npy", sz::Dtype::fp8_e4m3, kv_e4m3(2 * 3 * 4 * 8, 6), true, {}};
    c.use_tensor = true;
    c.tensor.dtype = sz::Dtype::fp8_e4m3;
    c.tensor.rank = 4;
    c.tensor.dims[0] = 2;
    c.tensor.dims[1] = 3;
    c.tensor.dims[2] = 4;
    c.tensor.dims[3] = 8;
    c.tensor.total_elems = 192;
    c.tensor.origin = sz::TensorOrigin::numpy;
    c.name_bytes = "layer0.k";
    c.container = std::string("\x93NUMPY\x01\x00v\x00{'descr': '|V1', 'fortran_order': False, 'shape': (2, 3, 4, 8), }", 74);
    c.tensor.container = sz::ContainerKind::npy;
    out.push_back(c);
  }
  {
    Case c{"tensor_bf16_rank0", sz::Dtype::bf16, {0x80, 0x3F}, false, {}};
    c.use_tensor = true;
    c.tensor.dtype = sz::Dtype::bf16;
    c.tensor.rank = 0;
    c.tensor.total_elems = 1;
    c.tensor.origin = sz::TensorOrigin::torch;
    out.push_back(c);
  }
  return out;
}

std::vector<uint8_t> compress_case(Case& c, const char* backend) {
  const uint64_t n = c.input.size() / sz::dtype_bytes(c.dtype);
  sz::CompressOptions o;
  o.backend = backend;
  o.checksum = c.checksum;
  if (c.use_cb) o.codebook = &c.cb;
  uint64_t extra = 0;
  if (c.use_tensor) {
    c.tensor.name = c.name_bytes.empty() ? nullptr : c.name_bytes.data();
    c.tensor.name_size = static_cast<uint32_t>(c.name_bytes.size());
    c.tensor.container_header = c.container.empty() ? nullptr : reinterpret_cast<const uint8_t*>(c.container.data());
    c.tensor.container_size = static_cast<uint32_t>(c.container.size());
    o.tensor = &c.tensor;
    extra = sz::tensor_desc_size(c.tensor);
  }
  std::vector<uint8_t> f(sz::compress_bound(c.dtype, n) + extra);
  const sz::Result r = sz::compress(c.dtype, c.input.data(), n, f.data(), f.size(), o);
  EXPECT_EQ(r.status, sz::Status::ok) << c.name << " " << backend;
  f.resize(r.size);
  return f;
}

std::string path_of(const std::string& name) { return std::string(SPLITZIP_GOLDEN_DIR) + "/e4m3/" + name + ".sz"; }

TEST(GoldenE4M3, FramesMatchOnEveryBackendAndDecode) {
  const bool regen = std::getenv("SPLITZIP_REGEN_GOLDEN") != nullptr;
  for (Case& c : cases()) {
    const auto ref = compress_case(c, "reference");
    if (regen) {
      std::ofstream(path_of(c.name), std::ios::binary).write(reinterpret_cast<const char*>(ref.data()),
                                                              static_cast<std::streamsize>(ref.size()));
    }
    std::ifstream in(path_of(c.name), std::ios::binary);
    ASSERT_TRUE(in.good()) << path_of(c.name);
    const std::vector<uint8_t> golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(ref, golden) << c.name << ": the reference no longer writes the golden frame";
    for (size_t i = 0; i < sz::backend_count(); ++i) {
      const char* b = sz::backend_name(i);
      if (!sz::backend_available(b) || std::string(b) == "cuda") continue;
      EXPECT_EQ(compress_case(c, b), golden) << c.name << " " << b;
      std::vector<uint8_t> out(c.input.size() + 1, 0xEE);
      sz::DecompressOptions o;
      o.backend = b;
      const sz::Result r = sz::decompress(golden.data(), golden.size(), out.data(), out.size(), o);
      ASSERT_EQ(r.status, sz::Status::ok) << c.name << " " << b;
      out.resize(r.size);
      EXPECT_EQ(out, c.input) << c.name << " " << b;
    }
    sz::TensorDesc t;
    bool present = false;
    ASSERT_EQ(sz::read_tensor_desc(golden.data(), golden.size(), &t, &present), sz::Status::ok) << c.name;
    EXPECT_EQ(present, c.use_tensor) << c.name;
    if (present) {
      EXPECT_EQ(t.rank, c.tensor.rank);
      for (uint32_t d = 0; d < t.rank; ++d) EXPECT_EQ(t.dims[d], c.tensor.dims[d]);
      EXPECT_EQ(t.total_elems, c.tensor.total_elems);
      EXPECT_EQ(t.origin, c.tensor.origin);
      EXPECT_EQ(std::string(t.name ? t.name : "", t.name_size), c.name_bytes);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(t.container_header ? t.container_header : reinterpret_cast<const uint8_t*>("")),
                            t.container_size),
                c.container);
      sz::FrameInfo fi;
      ASSERT_EQ(sz::frame_info(golden.data(), golden.size(), &fi), sz::Status::ok);
      EXPECT_TRUE(fi.has_tensor);
    }
  }
}

TEST(GoldenE4M3, TensorSectionFaults) {
  Case c = cases()[5];
  const auto good = compress_case(c, "reference");
  sz::FrameInfo fi;
  ASSERT_EQ(sz::frame_info(good.data(), good.size(), &fi), sz::Status::ok);
  const uint64_t sec = good.size() - sz::tensor_desc_size(c.tensor);
  sz::TensorDesc t;
  bool present = false;
  auto f = good;
  f[sec + 40] ^= 1;  // a dim byte: the section check catches it
  EXPECT_EQ(sz::read_tensor_desc(f.data(), f.size(), &t, &present), sz::Status::header_corrupt);
  f = good;
  f[sec] = 'X';  // magic
  EXPECT_EQ(sz::read_tensor_desc(f.data(), f.size(), &t, &present), sz::Status::bad_header);
  // The values still decode: the section is outside the payload.
  std::vector<uint8_t> out(c.input.size());
  EXPECT_EQ(sz::decompress(f.data(), f.size(), out.data(), out.size()).status, sz::Status::ok);
  // v1 frames know no TENSOR flag and no dtype 5.
  sz::TensorDesc bad = c.tensor;
  bad.dims[0] = 3;  // product no longer matches total_elems
  EXPECT_EQ(sz::tensor_desc_size(bad), 0u);
}

}  // namespace
